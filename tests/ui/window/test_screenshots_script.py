"""scripts/screenshots.py keeps working: it renders every picture the docs show, and they are not blank."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from tests.conftest import PYTHON, REPO, subprocess_env

EXPECTED = {"settings-llm-ja", "settings-llm-en", "settings-devices-ja", "settings-bridge-en", "first-run-ja",
            "first-run-en-dark", "settings-general-en-dark", "main-window-ja", "main-window-en-dark",
            "main-window-search-ja", "main-window-camera-en",
            "main-window-noticing-ja", "settings-companions-ja", "settings-companions-en",
            "settings-search-ja", "companion-editor-ja", "main-window-imported-ja"}


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
def test_the_script_renders_all_pictures(qapp: QApplication, tmp_path: Path) -> None:
    out = tmp_path / "shots"
    env = subprocess_env(tmp_path / "home", QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([PYTHON, str(REPO / "scripts" / "screenshots.py"), str(out)], capture_output=True,
                            text=True, env=env, cwd=REPO, timeout=240, check=False)
    assert result.returncode == 0, result.stderr
    assert {p.stem for p in out.glob("*.png")} == EXPECTED
    for path in out.glob("*.png"):
        image = QImage(str(path))
        assert image.width() >= 400, path
        colours = {image.pixel(x, y) for x in range(0, image.width(), 23) for y in range(0, image.height(), 23)}
        assert len(colours) > 5, f"{path.name} looks blank"
