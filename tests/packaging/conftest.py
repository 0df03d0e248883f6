"""The bundle, built once per session (or reused from the cache when nothing it is made of changed)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO, subprocess_env
from tests.packaging.bundle_build import build_bundle


@pytest.fixture(scope="session")
def bundle() -> Path:
    """The PyInstaller bundle's folder: ``madoi``, ``madoi-gui`` and ``_internal/``. ``MADOI_TEST_BUNDLE=<folder>``
    tests that bundle instead (one built elsewhere, or by hand)."""
    given = os.environ.get("MADOI_TEST_BUNDLE")
    folder, seconds = (Path(given), None) if given else build_bundle()
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    how = f"built in {seconds:.0f} s" if seconds is not None else "reused"
    print(f"\nmadoi bundle: {folder} ({how}, {size / 1e6:.0f} MB)", file=sys.__stderr__, flush=True)
    return folder


def bundle_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for the bundle's program: no Python of the build environment leaks in."""
    env = subprocess_env(home, **extra)
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    return env


def _packaging_module(name: str) -> ModuleType:
    """A module of packaging/ (not a package: loaded from its file)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "packaging" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bundle_contents = _packaging_module("bundle_contents")  # what the bundle leaves out
