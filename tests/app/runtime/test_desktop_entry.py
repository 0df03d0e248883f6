"""The desktop launcher: a valid freedesktop entry that starts this installation's window, with its icon."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.runtime.desktop_entry import data_home, desktop_entry_text, install_desktop_entry, install_from_command_line


def _parse(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive in the spec
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_install_writes_a_launcher_and_icon_under_xdg_data_home(tmp_path: Path) -> None:
    data = tmp_path / "xdg-data"
    installed = install_desktop_entry(environ={"XDG_DATA_HOME": str(data)})
    assert installed.desktop_file == data / "applications" / "madoi.desktop"
    entry = _parse(installed.desktop_file)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Madoi"
    assert entry["Name[ja]"] == "円居 Madoi"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")
    assert Path(entry["Icon"]) == installed.icon_file
    assert installed.icon_file.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert "madoi-gui" in entry["Exec"] or entry["Exec"].endswith("-m app.main")
    assert not list((data / "applications").glob("*.tmp"))


def test_relative_xdg_data_home_is_ignored_as_the_spec_says() -> None:
    assert data_home({"XDG_DATA_HOME": "relative/dir"}) == Path.home() / ".local" / "share"


def test_paths_with_spaces_are_quoted_so_the_launcher_still_runs(tmp_path: Path) -> None:
    target = tmp_path / "with space"
    installed = install_desktop_entry(target, command=["/opt/my apps/madoi-gui", "--flag"])
    assert installed.exec_line == '"/opt/my apps/madoi-gui" --flag'
    assert _parse(installed.desktop_file)["Exec"] == '"/opt/my apps/madoi-gui" --flag'


def test_percent_signs_are_escaped_in_exec() -> None:
    text = desktop_entry_text(["/x/100%/madoi-gui"], Path("/i.svg"))
    assert "Exec=/x/100%%/madoi-gui\n" in text


def test_the_exec_command_really_starts_this_installation(tmp_path: Path) -> None:
    installed = install_desktop_entry(tmp_path)
    exe = installed.exec_line.strip('"').split('" ')[0].split(" ")[0]
    # Running the GUI is the screenshot test's job; here: the launcher points at a program that exists.
    assert Path(exe).exists()


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_file_validate_accepts_it(tmp_path: Path) -> None:
    installed = install_desktop_entry(tmp_path)
    result = subprocess.run(["desktop-file-validate", str(installed.desktop_file)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_command_reports_where_it_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert install_from_command_line() == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "data" / "applications" / "madoi.desktop") in out


def test_the_command_fails_with_a_reason_when_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert install_from_command_line() == 1
    assert "could not install the desktop entry" in capsys.readouterr().err


def _fake_bundle(folder: Path, *programs: str) -> Path:
    """A PyInstaller bundle's folder as the desktop entry code sees it: its programs (executable files)."""
    folder.mkdir(parents=True)
    for name in programs:
        (folder / name).write_text("#!/bin/sh\n", encoding="utf-8")
        (folder / name).chmod(0o755)
    return folder / programs[0]


def test_from_a_bundle_the_launcher_runs_the_bundles_window_program(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    madoi = _fake_bundle(tmp_path / "dist" / "madoi", "madoi", "madoi-gui")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(madoi))
    installed = install_desktop_entry(tmp_path / "data")
    assert installed.exec_line == str(madoi.parent / "madoi-gui")


def test_from_a_bundle_without_madoi_gui_the_launcher_runs_the_bundle_itself(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    madoi = _fake_bundle(tmp_path / "bundle", "madoi")
    elsewhere = _fake_bundle(tmp_path / "other-install" / "bin", "madoi-gui")
    monkeypatch.setenv("PATH", str(elsewhere.parent))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(madoi))
    installed = install_desktop_entry(tmp_path / "data")
    # The bundle's program opens the window without options; '-m app.main' is refused by it (there is no Python),
    # and another installation's madoi-gui is not this one.
    assert installed.exec_line == str(madoi)
