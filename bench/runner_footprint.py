"""What Madoi's own model costs the computer: the memory (RSS) of the app and of its model runner with the model
loaded, and their idle CPU, against llama-cpp-python's stock server on the same model file in the same run.

``madoi --headless`` starts on a fresh data directory with ``MADOI_LLM_MODEL_FILE`` = the tests' real 0.5B model
(scripts/real_model.py); once the runner's child process answers, both processes are sampled. The baseline is the
stock server (``python -m llama_cpp.server``, the tests' .venv-llama) loading the same file.

Usage: .venv/bin/python bench/runner_footprint.py [--idle-s 30]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _report
import psutil
from _report import real_model_script, report

RUNNER_CHILD = "app.llm.runner.child"


def idle_cpu_shares(processes: list[psutil.Process], seconds: float) -> list[float]:
    """The share of one core each of ``processes`` used over the same ``seconds`` (user + system time)."""
    before = [p.cpu_times() for p in processes]
    time.sleep(seconds)
    after = [p.cpu_times() for p in processes]
    return [(a.user - b.user + a.system - b.system) / seconds for a, b in zip(after, before, strict=True)]


def runner_child(app: psutil.Process, timeout_s: float) -> psutil.Process:
    """The app's model runner process once it has loaded the model (its memory stops growing)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for child in app.children(recursive=True):
            try:
                if RUNNER_CHILD in " ".join(child.cmdline()) or "--model-runner-child" in child.cmdline():
                    return settled(child, deadline)
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.5)
    raise RuntimeError(f"no model runner started within {timeout_s:.0f} s")


def settled(process: psutil.Process, deadline: float) -> psutil.Process:
    """Waits until ``process``'s RSS holds within 1% for two seconds (the model is mapped and loaded)."""
    last = process.memory_info().rss
    while time.monotonic() < deadline:
        time.sleep(2)
        now = process.memory_info().rss
        if abs(now - last) <= 0.01 * last:
            return process
        last = now
    return process


def measure_app(model: Path, idle_s: float) -> tuple[float, float, float, float]:
    with tempfile.TemporaryDirectory(prefix="madoi-footprint-") as home:
        env = {**os.environ, "MADOI_HOME": home, "MADOI_BRIDGE_PORT": "0", "MADOI_CAMERA": "none",
               "MADOI_LLM_MODEL_FILE": str(model), "PYTHONPATH": str(_report.REPO)}
        proc = subprocess.Popen([sys.executable, "-m", "app.main", "--headless"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=env, cwd=_report.REPO)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith("madoi: ready"):
                raise RuntimeError(f"madoi did not start: {line!r}")
            app = psutil.Process(proc.pid)
            runner = runner_child(app, timeout_s=300)
            time.sleep(5)  # the start-up's background work (learning the endpoint, indexing the samples) settles
            app_cpu, runner_cpu = idle_cpu_shares([app, runner], idle_s)
            return app.memory_info().rss / 2**20, runner.memory_info().rss / 2**20, app_cpu, runner_cpu
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def measure_stock(idle_s: float) -> tuple[float, float]:
    module = real_model_script()
    with tempfile.TemporaryDirectory(prefix="madoi-footprint-stock-") as logs:
        server = module.start_server(Path(logs))
        try:
            process = settled(psutil.Process(server.process.pid), time.monotonic() + 120)
            return process.memory_info().rss / 2**20, idle_cpu_shares([process], idle_s)[0]
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle-s", type=float, default=30.0, help="seconds of idle CPU sampling per process")
    args = parser.parse_args()
    model = real_model_script().paths().model
    print(f"load average: {os.getloadavg()[0]:.1f}", flush=True)
    stock_rss, stock_cpu = measure_stock(args.idle_s)
    report("stock_server_rss", stock_rss, "MiB")
    app_rss, runner_rss, app_cpu, runner_cpu = measure_app(model, args.idle_s)
    report("runner_rss_model_loaded", runner_rss, "MiB", "stock_server_rss", stock_rss)
    report("app_rss_with_runner", app_rss, "MiB")
    report("app_idle_cpu", 100 * app_cpu, "% of a core")
    report("runner_idle_cpu", 100 * runner_cpu, "% of a core", "stock_server_idle_cpu", 100 * stock_cpu)


if __name__ == "__main__":
    main()
