"""Renders the main window mid-conversation, the settings dialog and the first-run panel, in Japanese and English,
to PNG files.

Run under a virtual X server so the real xcb platform (fonts, style) draws them:

    xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python scripts/screenshots.py docs/screenshots

Uses a throw-away MADOI_HOME: your own settings and keyring are neither read nor written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=REPO / "docs" / "screenshots")
    parser.add_argument("--settings-only", action="store_true", help="the settings dialog and first-run panel only")
    args = parser.parse_args()
    if os.environ.get("DISPLAY") and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "xcb"
    home = tempfile.mkdtemp(prefix="madoi-shots-")
    for name in [n for n in os.environ if n.startswith("MADOI_")]:
        del os.environ[name]
    os.environ["MADOI_HOME"] = home
    # The window's runtime: no bridge, no model server probe, no keyring, speech rendered to files in the home.
    os.environ.update({"MADOI_BRIDGE_PORT": "0", "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "MADOI_VOICE_OUTPUT_DIR": str(Path(home) / "speech"),
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})

    import keyring.backends.fail
    from PySide6.QtWidgets import QApplication, QWidget

    from app.cards.checks import CompanionChecks, ModelCheck
    from app.devices.speaker import Pyttsx3Speaker
    from app.settings.model import load_settings
    from app.settings.secrets import SecretStore
    from companions.devices.ports import DeviceStatus
    from ui.settings.dialog import SettingsDialog
    from ui.settings.form import show_result
    from ui.window.first_run import FirstRunPanel
    from ui.window.i18n import use_language
    from ui.window.theme import apply_theme

    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    theme = apply_theme(app, "light")
    args.out.mkdir(parents=True, exist_ok=True)
    loaded = load_settings()
    written: list[Path] = []

    def shoot(widget: QWidget, name: str, size: tuple[int, int] | None = None) -> None:
        if size is not None:
            widget.resize(*size)
        widget.show()
        for _ in range(5):
            app.processEvents()
        path = args.out / f"{name}.png"
        if not widget.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        written.append(path)
        widget.close()

    no_keyring = SecretStore(backend=keyring.backends.fail.Keyring())

    speaker = Pyttsx3Speaker(None, output_dir=Path(home) / "speech")  # the engine's voices for the Companions tab
    asyncio.run(speaker.start())
    checks = CompanionChecks(CompanionChecks.from_files(loaded.paths).cards,
                             lambda: SimpleNamespace(speaker=speaker))  # type: ignore[arg-type,return-value]

    def dialog(language: str) -> SettingsDialog:
        use_language(language)  # the dialog opens in the window's language
        return SettingsDialog(loaded.settings, loaded, secrets=no_keyring, companions=checks)

    ja = dialog("ja")
    ja.base_url.setText("http://127.0.0.1:11434/v1")
    ja.model.setEditText("qwen2.5:3b")
    show_result(ja.connection_result, "ok", ja._t("conn.ok", n=3))
    ja.tabs.setCurrentIndex(1)
    shoot(ja, "settings-llm-ja")

    en = dialog("en")
    en.base_url.setText("localhost:11434")  # shows a validation message under the field
    en.tabs.setCurrentIndex(1)
    shoot(en, "settings-llm-en")

    devices = dialog("ja")
    devices.tabs.setCurrentIndex(2)
    shoot(devices, "settings-devices-ja")

    bridge = dialog("en")
    bridge.tabs.setCurrentIndex(3)
    bridge.bridge_enabled.setChecked(True)
    bridge.host.setText("0.0.0.0")
    shoot(bridge, "settings-bridge-en")

    for language in ("ja", "en"):
        people = dialog(language)
        people.tabs.setCurrentWidget(people.companions)
        page = people.companions
        hina = page.rows["hina"]
        hina.model.addItems(["llama3.2:1b", "qwen2.5:3b"])
        hina.model.setEditText("qwen2.5:3b")
        show_result(hina.model_result, "ok", page.model_check_text(ModelCheck("ok", "qwen2.5:3b", seconds=1.4)))
        hina.voice.setCurrentIndex(hina.voice.findData("jpx/ja+f3" if language == "ja" else "gmw/en-us+f3"))
        show_result(hina.voice_result, "ok", people._t("voice.ok"))
        shoot(people, f"settings-companions-{language}", (760, 640))

    knowledge = dialog("ja")
    knowledge.tabs.setCurrentWidget(knowledge.search)
    for folder in (Path(home) / "Documents" / "notes", Path(home) / "Documents" / "recipes"):
        folder.mkdir(parents=True, exist_ok=True)  # under the throw-away home
        knowledge.search.add_folder(folder)
    shoot(knowledge, "settings-search-ja", (760, 520))
    asyncio.run(speaker.stop())

    # The card says what this machine has (here: speech to files, no camera, search, no keyring).
    machine = (DeviceStatus("speaker", True), DeviceStatus("camera", False, "no camera: turned off in the settings"))
    use_language("ja")
    first_ja = FirstRunPanel()
    first_ja.show_machine(machine, search=True)
    first_ja.set_key_place(no_keyring.where)
    shoot(first_ja, "first-run-ja", (820, 660))

    theme.apply("dark")
    use_language("en")
    first_en = FirstRunPanel()
    first_en.show_machine(machine, search=True)
    first_en.set_key_place(no_keyring.where)
    first_en.set_problem("cannot connect to http://127.0.0.1:11434/v1 (ConnectError)")
    shoot(first_en, "first-run-en-dark", (820, 640))
    dark_dialog = dialog("en")
    dark_dialog.tabs.setCurrentIndex(0)
    shoot(dark_dialog, "settings-general-en-dark")

    if not args.settings_only:
        written += _main_windows(app, args.out, Path(home))
    for path in written:
        print(path)
    shutil.rmtree(home, ignore_errors=True)
    return 0


def _main_windows(app: object, out: Path, home: Path) -> list[Path]:
    """The main window mid-conversation: Japanese (light) and English (dark), on a qasync loop."""
    import asyncio

    import qasync

    from scripts.camera_shots import shoot_camera_window, shoot_noticing_window
    from scripts.companion_shots import shoot_companions
    from scripts.main_window_shots import search_for, shoot_main_window
    from ui.window.main_thread_gc import MainThreadGC

    async def shoot_all() -> list[Path]:
        ja = await shoot_main_window(out, "ja", "main-window-ja", home / "ja")
        en = await shoot_main_window(out, "en", "main-window-en-dark", home / "en", theme="dark")
        search = await shoot_main_window(out, "ja", "main-window-search-ja", home / "search", tab=1,
                                         before_shot=lambda w: search_for(w, "清水寺と金閣寺の違いは？"))
        camera = await shoot_camera_window(out, "en", "main-window-camera-en", home / "camera")
        noticing = await shoot_noticing_window(out, "ja", "main-window-noticing-ja", home / "noticing")
        own = await shoot_companions(out, home / "own")  # an imported character card: the editor, a conversation
        return [ja, en, search, camera, noticing, *own]

    app.setQuitOnLastWindowClosed(False)  # type: ignore[attr-defined]  # closing a window must not stop the loop
    # As the app does (ui/window/launch.py): Qt objects in reference cycles must be collected on this thread, never in
    # an executor thread of the runtime (that crashed the script about one run in four).
    MainThreadGC(app)  # type: ignore[arg-type]
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return loop.run_until_complete(shoot_all())


if __name__ == "__main__":
    sys.exit(main())
