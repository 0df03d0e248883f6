#!/usr/bin/env python3
"""Builds llama-cpp-python once per machine as a wheel that runs on any x86-64 CPU, and says where it is.

llama-cpp-python ships no wheels on PyPI: pip builds it from source with ``-march=native``. On a CPU that advertises
AMX inside a VM (this project's machines) that build dies with a general protection fault in ``libggml-cpu.so`` at
the first completion (ggml repacks the weights for AMX, which the VM does not really give). A generic build
(``GGML_NATIVE=OFF`` with AVX2/FMA/F16C, which every x86-64 CPU of the last ten years has) runs everywhere.

The wheel is kept in ${MADOI_WHEEL_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi/wheels}/<build id>/, the build id being
a hash of the version and the flags: a changed pin or flag builds again, a fresh clone or a deleted virtualenv
installs in seconds. pip's own wheel cache is not used for the build (it keys on the download, not on the flags,
and would hand back a native build made earlier).

Usage: scripts/llama_wheel.py [--print]    build if needed; print the wheel's path
Stdlib only: it runs before any virtualenv exists (scripts/bootstrap.sh, scripts/real_model.py).
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
# x86-64: the instruction sets of any CPU since ~2013 (Haswell, Zen), no AVX-512, no AMX, no -march=native.
GENERIC_X86_64 = ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
                  "-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]
# Elsewhere (arm64) the default build is generic for the architecture already; native stays off all the same.
GENERIC_OTHER = ["-DGGML_NATIVE=OFF"]


def cmake_args() -> list[str]:
    return GENERIC_X86_64 if platform.machine().lower() in ("x86_64", "amd64") else GENERIC_OTHER


def build_id() -> str:
    text = " ".join([LLAMA_CPP_PYTHON_VERSION, platform.machine(), sys.version.split()[0][:4], *cmake_args()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def wheel_dir() -> Path:
    if env := os.environ.get("MADOI_WHEEL_CACHE"):
        base = Path(env)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "madoi" / "wheels"
    return base / build_id()


def built_wheel() -> Path | None:
    found = sorted(wheel_dir().glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}-*.whl"))
    return found[0] if found else None


def ensure_wheel(python: str = sys.executable) -> Path:
    """The generic wheel, built with ``python``'s pip when it is not there yet (~5 min on 2 cores)."""
    if (wheel := built_wheel()) is not None:
        return wheel
    target = wheel_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"llama-wheel: building llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} for any "
          f"{platform.machine()} CPU (~5 min on 2 cores, once per machine)", file=sys.stderr, flush=True)
    env = {**os.environ, "CMAKE_ARGS": " ".join(cmake_args()), "FORCE_CMAKE": "1"}
    # Built next to its final place and renamed into it: an interrupted build leaves no half wheel behind.
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        subprocess.run([python, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-cache-dir",
                        "--no-deps", "--wheel-dir", tmp, f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"],
                       check=True, env=env)
        target.mkdir(exist_ok=True)
        for wheel in Path(tmp).glob("*.whl"):
            wheel.rename(target / wheel.name)
    print(f"llama-wheel: built in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    wheel = built_wheel()
    if wheel is None:
        raise RuntimeError(f"pip wheel left no llama-cpp-python wheel in {target}")
    return wheel


if __name__ == "__main__":
    print(ensure_wheel())
