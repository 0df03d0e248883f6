"""Start-up time to a usable state: ``madoi --headless`` and the window (needs $DISPLAY, e.g. under xvfb-run),
each measured from process start to the "madoi: ready" line, against a bare interpreter start in the same run.

Target: both under 1.5 s.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import _report
from _report import report

RUNS = 5


def time_to_ready(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env, cwd=_report.REPO)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    if not line.startswith("madoi: ready"):
        raise RuntimeError(f"madoi did not start: {line!r}")
    return elapsed


def bare_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MADOI_HOME": home, "MADOI_BRIDGE_PORT": "0", "PYTHONPATH": str(_report.REPO)}
        time_to_ready(["--headless"], env)  # warm the file cache and create the database
        baseline = statistics.median(bare_python() for _ in range(RUNS))
        report("startup_bare_python_median", baseline, "s")  # how loaded the machine was
        headless = statistics.median(time_to_ready(["--headless"], env) for _ in range(RUNS))
        report("startup_headless_median", headless, "s", "bare_python_start", baseline)
        if os.environ.get("DISPLAY"):
            window_env = {**env, "QT_QPA_PLATFORM": "xcb"}
            window = statistics.median(time_to_ready([], window_env) for _ in range(RUNS))
            report("startup_window_median", window, "s", "bare_python_start", baseline)
        else:
            print("startup_window: skipped (no $DISPLAY; run under xvfb-run)")


if __name__ == "__main__":
    main()
