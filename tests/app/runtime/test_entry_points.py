"""The command line: --version, --help, and the headless runtime starting and stopping on signals."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from companions import __version__
from tests.conftest import PYTHON, REPO, subprocess_env


def run_madoi(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "app.main", *args], capture_output=True, text=True, timeout=60,
                          env=subprocess_env(home, PYTHONPATH=str(REPO)), cwd=REPO, check=False)


def test_version_and_help(tmp_path: Path) -> None:
    version = run_madoi(tmp_path, "--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"madoi {__version__}"
    help_ = run_madoi(tmp_path, "--help")
    assert help_.returncode == 0
    assert "--headless" in help_.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_headless_starts_and_stops_cleanly_on_signals(tmp_path: Path, sig: signal.Signals) -> None:
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", "app.main", "--headless"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env(tmp_path, PYTHONPATH=str(REPO)),
                            cwd=REPO)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    startup = time.perf_counter() - started
    assert line.startswith("madoi: ready"), line + (proc.stderr.read() if proc.stderr else "")
    proc.send_signal(sig)
    stop_started = time.perf_counter()
    out, err = proc.communicate(timeout=10)
    assert time.perf_counter() - stop_started < 2.0
    assert proc.returncode == 0, err
    assert "madoi: stopped" in out
    assert "Traceback" not in err
    assert (tmp_path / "madoi.sqlite3").exists()
    assert startup < 10  # the 1.5 s figure is measured by bench/startup.py; this only guards against hangs


def test_a_broken_settings_file_is_reported_and_headless_still_starts(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "settings.toml").write_text("[bridge]\nport = 'x'\n", encoding="utf-8")
    proc = subprocess.Popen([PYTHON, "-m", "app.main", "--headless"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env(tmp_path, PYTHONPATH=str(REPO)),
                            cwd=REPO)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("madoi: ready")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert "bridge.port" in err
