"""The first-run download of "Talk now", on a loopback host that behaves like Hugging Face (tests/app/llm/hf_host.py:
the redirect to a content URL, ETag, Content-Length, Range), serving the real 0.5B model of scripts/real_model.py.

Cases, in one run:
- **plain**: the baseline, one streamed GET of the file with httpx to disk (no checks, no resume): what the bytes
  cost on this machine.
- **fresh**: Madoi's download (app/downloads.py: the offer's HEAD, the redirect, sha256 on the way, the
  part file and its record, the rename), against ``plain``.
- **resumed**: the same, the host dropping the connection at 50% of the file; Madoi continues with a Range request.
  Against ``plain``, and the bytes sent by the host against the file's size (goal: 1.0x, nothing fetched twice).
- **first word after the download**: a fresh data directory, Madoi started with the downloaded file
  (``MADOI_LLM_MODEL_FILE``, its own runner), the user's greeting 5 s after ``ready``, to the first kept word;
  then the time from the click on "Download" (the fresh download's start) to that word. Against the floor: one cold
  completion of a companion-sized prompt on llama-cpp-python's stock server with the same file, measured first and
  stopped before Madoi starts (bench/first_word.py's floor).

Run: ``python bench/model_download.py`` (note ``uptime`` with every figure).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _report import real_model_script, report

from app.downloads import DownloadableModel, download, prepare_download
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host

MB = 1 << 20


def hosted_model(host: HuggingFaceLikeHost, source: Path, sha256: str, **faults: object) -> DownloadableModel:
    host.host(source, sha256=sha256, **faults)
    return DownloadableModel(name="Qwen2.5 0.5B (test)", repo="test/Qwen-GGUF", file=source.name, revision="main",
                             size=source.stat().st_size, sha256=sha256, licence="Apache-2.0",
                             licence_url="https://example.invalid/LICENSE", host=host.url)


async def plain_get(url: str, destination: Path) -> float:
    """One streamed GET to disk, following the redirect: the baseline."""
    began = time.perf_counter()
    async with httpx.AsyncClient(follow_redirects=True, timeout=60) as http, http.stream("GET", url) as answer:
        answer.raise_for_status()
        with destination.open("wb") as out:
            async for block in answer.aiter_bytes(1 << 20):
                out.write(block)
    return time.perf_counter() - began


def sent_bytes(host: HuggingFaceLikeHost, name: str, size: int, drops: list[int]) -> int:
    """What the host sent of ``name``: each GET from its range's start to the end, or for the first ones as many
    bytes as ``drops`` says (where it dropped the connection)."""
    total = 0
    drops = list(drops)
    for headers in host.gets(name):
        start = int(headers["range"].removeprefix("bytes=").rstrip("-")) if "range" in headers else 0
        total += min(size - start, drops.pop(0)) if drops else size - start
    return total


async def first_word_with(model_file: Path, floor_s: float) -> float:
    """Madoi started on a fresh data directory with ``model_file``; the greeting 5 s after ready; seconds from the
    greeting to the first kept word (bench/first_word.py's cold case)."""
    import first_word

    home = tempfile.mkdtemp(prefix="madoi-download-first-word-")
    os.environ.update({"MADOI_HOME": home, "MADOI_LANGUAGE": "ja", "MADOI_VOICE_ENABLED": "false",
                       "MADOI_BRIDGE_PORT": "0", "MADOI_CAMERA": "none", "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    first_word.use_model("", "", model_file)
    watch = first_word.Watch()
    first_word._RECORDING[:] = [watch]  # the bench's own recorder
    first_word.record_requests_once()
    began = time.perf_counter()
    runtime = await first_word.start_madoi(watch)
    try:
        await asyncio.sleep(first_word.READING_S)
        outcome = await first_word.greet(runtime, watch, first_word.GREETING, None, voice=False, timeout=300)
        first_word.show("first_kept_word_after_download", outcome, "floor", floor_s)
        print(f"  Madoi's start to the greeting's first kept word: {time.perf_counter() - began:.1f} s", flush=True)
        await first_word.until_idle(runtime)
    finally:
        await runtime.stop()
    return outcome.seconds


async def run() -> None:
    import first_word

    script = real_model_script()
    paths = script.paths()
    if not paths.model_ready():
        raise SystemExit(f"the test model is not assembled ({paths.model}): python3 scripts/real_model.py")
    source = Path(paths.model)
    size = int(script.MODEL_SIZE)  # known: scripts/real_model.py pins it
    print(f"-- {source.name}: {size / MB:.0f} MB; load average {os.getloadavg()[0]:.2f}", flush=True)
    stock = script.start_server(Path(tempfile.mkdtemp(prefix="madoi-download-server-")))
    try:
        floor_s = await first_word.floor(stock.base_url, stock.model, None)
    finally:
        stock.stop()
    report("floor", floor_s, "s")
    work = Path(tempfile.mkdtemp(prefix="madoi-download-"))
    with hugging_face_like_host() as host:
        model = hosted_model(host, source, script.MODEL_SHA256)
        plain_s = await plain_get(model.url, work / "plain.gguf")
        (work / "plain.gguf").unlink()
        report("plain", plain_s, "s")

        clicked = time.perf_counter()
        offer = await prepare_download(model, work / "fresh" / source.name)
        fresh = await download(offer)
        fresh_s = time.perf_counter() - clicked
        report("fresh", fresh_s, "s", "plain", plain_s)

        dropped = hosted_model(host, source, script.MODEL_SHA256, drop_after=[size // 2])
        host.requests.clear()
        began = time.perf_counter()
        resumed = await download(await prepare_download(dropped, work / "resumed" / source.name),
                                 retry_delay_s=0.0)
        resumed_s = time.perf_counter() - began
        report("resumed", resumed_s, "s", "plain", plain_s)
        ranges = [h.get("range") for h in host.gets(source.name)]
        sent = sent_bytes(host, source.name, size, [size // 2])
        print(f"  GETs: {ranges}; sent {sent / MB:.0f} MB of {size / MB:.0f} MB ({sent / size:.2f}x the file)",
              flush=True)
        assert resumed.stat().st_size == size
        resumed.unlink()

    word_s = await first_word_with(fresh, floor_s)
    total = time.perf_counter() - clicked
    report("download_to_first_word", total, "s", "floor", floor_s)
    print(f"  of which: download {fresh_s:.1f} s, Madoi's start, 5 s of reading, greeting to first kept word "
          f"{word_s:.1f} s; load average {os.getloadavg()[0]:.2f}", flush=True)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    asyncio.run(run())


if __name__ == "__main__":
    main()
