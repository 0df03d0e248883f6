"""``madoi --install-desktop-entry``: a freedesktop launcher so Madoi opens with a double click (Linux).

Writes ``madoi.desktop`` into ``$XDG_DATA_HOME/applications`` (default ``~/.local/share/applications``) and the
app icon into the hicolor theme beside it. The launcher runs the ``madoi-gui`` script of this installation
(no terminal), falling back to ``python -m app.main`` when the script is not installed; from a PyInstaller bundle
it runs the bundle's ``madoi-gui`` (or its ``madoi``, which opens the window too).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from companions import __version__
from resources import RESOURCES_DIR

APP_ID: Final = "madoi"
ICON_SOURCE: Final = RESOURCES_DIR / "icons" / "madoi.svg"
CATEGORIES: Final = "Network;Chat;"


@dataclass(frozen=True)
class InstalledEntry:
    desktop_file: Path
    icon_file: Path
    exec_line: str


def data_home(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    value = env.get("XDG_DATA_HOME", "")
    # The spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    if value and Path(value).is_absolute():
        return Path(value)
    return Path.home() / ".local" / "share"


def _quote(arg: str) -> str:
    """Quotes one Exec argument as the Desktop Entry spec asks (reserved characters inside double quotes)."""
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`'):
        return arg.replace("%", "%%")
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return '"' + escaped.replace("%", "%%") + '"'


def gui_command() -> list[str]:
    """The command that opens the window of *this* installation without a console."""
    script = Path(sys.executable).parent / "madoi-gui"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    if getattr(sys, "frozen", False):
        # A PyInstaller bundle: sys.executable is Madoi itself (no Python to give ``-m``), and without options it
        # opens the window. Never another installation's madoi-gui from PATH.
        return [sys.executable]
    found = shutil.which("madoi-gui")
    if found:
        return [found]
    return [sys.executable, "-m", "app.main"]


def desktop_entry_text(command: list[str], icon: Path) -> str:
    exec_line = " ".join(_quote(a) for a in command)
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.0",
        "Name=Madoi",
        "Name[ja]=円居 Madoi",
        "GenericName=AI companions",
        "GenericName[ja]=AI コンパニオン",
        "Comment=Several AI companions who talk with you and with each other",
        "Comment[ja]=あなたと、そしてお互いに話す AI コンパニオンたち",
        f"Exec={exec_line}",
        f"Icon={icon}",
        "Terminal=false",
        f"Categories={CATEGORIES}",
        "Keywords=AI;chat;companion;LLM;voice;",
        "Keywords[ja]=AI;チャット;コンパニオン;会話;",
        "StartupNotify=true",
        f"X-Madoi-Version={__version__}",
    ]
    return "\n".join(lines) + "\n"


def install_desktop_entry(target_dir: Path | None = None, *, command: list[str] | None = None,
                          environ: os._Environ[str] | dict[str, str] | None = None) -> InstalledEntry:
    """Installs the launcher and icon; returns where they went. ``target_dir`` is the *data home*
    (``applications/`` and ``icons/`` are created under it); by default ``$XDG_DATA_HOME``.

    Raises:
        OSError: the files could not be written (the caller prints it; nothing half-written is left behind).
    """
    root = target_dir if target_dir is not None else data_home(environ)
    icon_dir = root / "icons" / "hicolor" / "scalable" / "apps"
    icon_dir.mkdir(parents=True, exist_ok=True)
    icon = icon_dir / f"{APP_ID}.svg"
    shutil.copyfile(ICON_SOURCE, icon)
    apps = root / "applications"
    apps.mkdir(parents=True, exist_ok=True)
    desktop = apps / f"{APP_ID}.desktop"
    text = desktop_entry_text(command if command is not None else gui_command(), icon)
    tmp = desktop.with_suffix(".desktop.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o755)  # some desktops only trust executable launchers
    os.replace(tmp, desktop)
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))[len("Exec="):]
    return InstalledEntry(desktop_file=desktop, icon_file=icon, exec_line=exec_line)


def install_from_command_line() -> int:
    """``madoi --install-desktop-entry``: installs, says where, and exits 0 (or 1 with the reason)."""
    try:
        installed = install_desktop_entry()
    except OSError as err:
        print(f"madoi: could not install the desktop entry: {err}", file=sys.stderr)
        return 1
    print(f"madoi: desktop entry written to {installed.desktop_file}")
    print(f"madoi: icon written to {installed.icon_file}")
    print(f"madoi: it runs {installed.exec_line}")
    return 0
