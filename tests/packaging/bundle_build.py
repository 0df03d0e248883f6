"""The PyInstaller bundle under test: built once from this checkout with the dev extra's PyInstaller, and kept.

A build takes about a minute on two cores. It is kept under ``$MADOI_TEST_CACHE`` (default
``~/.cache/madoi-test``) in ``bundles/<key>/madoi``, where the key hashes everything the bundle is made of: the
spec and packaging files, pyproject.toml, every file of app/, companions/, ui/ and resources/, the installed
distributions with their versions, Python's and PyInstaller's versions. A changed line anywhere gives a new build;
an unchanged tree (a second run of the suite) reuses it. Other trees' bundles unused for 15 minutes are removed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import REPO

SOURCES = ("app", "companions", "ui", "resources")
PACKAGING = ("pyproject.toml", "packaging/madoi.spec", "packaging/madoi_gui.py", "packaging/bundle_contents.py",
             "packaging/hooks/hook-webrtcvad.py", "packaging/hooks/hook-sudachipy.py")
# Another tree's bundle (~800 MB) is removed once unused this long: long enough for a parallel run of the packaging
# tests (a few minutes), short enough that a day of edits does not pile up bundles.
UNUSED_FOR = 15 * 60


def cache_root() -> Path:
    explicit = os.environ.get("MADOI_TEST_CACHE")
    if explicit:
        return Path(explicit) / "bundles"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "madoi-test" / "bundles"


def bundle_key() -> str:
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()):
        digest.update(dist.encode())
    files = [REPO / p for p in PACKAGING]
    for top in SOURCES:
        files += sorted(p for p in (REPO / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def build_bundle() -> tuple[Path, float | None]:
    """The bundle's folder (``.../madoi`` with the ``madoi`` program), and the build's seconds (None: reused)."""
    root = cache_root()
    target = root / bundle_key()
    program = target / "madoi" / "madoi"
    _forget_old(root, keep=target)
    if program.is_file():
        target.touch()
        return program.parent, None
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=root, prefix="building-") as tmp:
        result = subprocess.run(
            [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
             "--distpath", str(Path(tmp) / "dist"), "--workpath", str(Path(tmp) / "work"),
             str(REPO / "packaging" / "madoi.spec")],
            cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise AssertionError(f"the PyInstaller build failed:\n{result.stderr[-5000:]}")
        built = Path(tmp) / "dist"
        try:
            built.rename(target)  # atomic: a parallel run of the same tree either finds it whole or builds its own
        except OSError:
            if not program.is_file():
                raise
    return program.parent, time.perf_counter() - started


def _forget_old(root: Path, keep: Path) -> None:
    if not root.is_dir():
        return
    now = time.time()
    for entry in root.iterdir():
        if entry != keep and now - entry.stat().st_mtime > UNUSED_FOR:
            shutil.rmtree(entry, ignore_errors=True)
