"""What a person sees: ``madoi`` opens a real window on an X server (Xvfb), captured as a PNG."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import PYTHON, REPO, subprocess_env
from tests.ui.x_desktop import GRAB


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X server (./test runs under xvfb-run)")
def test_the_window_appears_on_screen(tmp_path: Path) -> None:
    env = subprocess_env(tmp_path / "home", PYTHONPATH=str(REPO), QT_QPA_PLATFORM="xcb")
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", "app.main"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=REPO)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("madoi: ready"), line + (proc.stderr.read() if proc.stderr else "")
        ready_after = time.perf_counter() - started
        time.sleep(0.5)  # let the window manager-less X server paint; a screenshot has no event to wait on
        shot = tmp_path / "main-window.png"
        grab = subprocess.run([PYTHON, "-c", GRAB, str(shot)], capture_output=True, text=True, env=env,
                              timeout=30, check=True)
        assert float(grab.stdout.strip()) > 0.3, "the screen is still black: no window drawn"
        keep = os.environ.get("MADOI_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, Path(keep) / "main-window.png")
        assert ready_after < 15
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "madoi: stopped" in out
