"""Talking to the companions, for scripts/screenshots.py: the user speaks (espeak-ng's voice in a WAV file stands in
for the microphone), the status bar says "Hearing you…", the words appear in the message box as they are said;
and the settings' Voice input tab.

Three scripted companions on a real runtime, the real voice input (WebRTC detector, PocketSphinx).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from companions.llm.scripted import reply_json, say
from scripts.main_window_shots import dispose
from tests.app.speech_audio import clip
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until
from ui.settings.dialog import SettingsDialog
from ui.window.i18n import use_language
from ui.window.main_window import MainWindow

SCENE = {"typed": "Hi Akari!", "answer": "Hi! Talk to me, I'm listening.",
         "said": "what is the weather like tomorrow and should i take an umbrella with me",
         "next": "Sunny in the morning, rain later: take one!"}


def _environment(out: Path, home: Path) -> None:
    """The folders, the user's speech as a file, and the runtime's settings through the environment."""
    home.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["MADOI_HOME"] = str(home)
    os.environ["MADOI_LANGUAGE"] = "en"
    spoken = clip(SCENE["said"], home / "user.wav", before_s=4.0, after_s=20.0, rate=130)
    os.environ["MADOI_VOICE_INPUT_DEVICE"] = f"file:{spoken.path}"


async def shoot_voice_input(out: Path, home: Path, *, size: tuple[int, int] = (1360, 820),
                            language: str = "en") -> list[Path]:
    """Renders ``out/main-window-voice-en.png`` and ``out/settings-voice-input-<language>.png``."""
    await asyncio.to_thread(_environment, out, home)
    cast = scripted_cast()
    lines(cast["akari"], say(SCENE["answer"]), say(SCENE["next"]))
    for other in ("hina", "souta"):  # they listen whenever asked
        cast[other].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))
    paths = []
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        window.resize(*size)
        window.show()
        await window.attach()
        runtime.parts.conversations.send(SCENE["typed"], to=["akari"])
        await until(window.chat.message_shown, lambda: window.chat.message_count >= 2, 30)
        window.chat.address.set_addressees(["akari"])
        await window.microphone_switch.port.set_on(True)
        await until(window.spoken_words.shown, lambda: window.microphone_switch.state == "hearing"
                    and len(window.chat.input.toPlainText().split()) >= 5, 30)
        await asyncio.sleep(0.2)  # the loop (Qt's) paints every panel's last update
        path = out / "main-window-voice-en.png"
        if not window.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        paths.append(path)
        await window.microphone_switch.port.set_on(False)
        use_language(language)  # the dialog opens in the window's language
        dialog = SettingsDialog(runtime.settings, runtime.loaded)
        dialog.tabs.setCurrentWidget(dialog.voice_input)
        page = dialog.voice_input
        page.recognizer.setCurrentIndex(page.recognizer.findData("faster-whisper-base"))  # not downloaded yet
        dialog.resize(760, 700)
        dialog.show()
        await asyncio.sleep(0.3)
        path = out / f"settings-voice-input-{language}.png"
        if not dialog.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        paths.append(path)
        await dispose(dialog, window)
    return paths


if __name__ == "__main__":  # xvfb-run -a .venv/bin/python -m scripts.voice_input_shots OUT_DIR
    import sys
    import tempfile

    import qasync
    from PySide6.QtWidgets import QApplication

    from ui.window.theme import apply_theme

    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    app.setQuitOnLastWindowClosed(False)
    for name in [n for n in os.environ if n.startswith("MADOI_")]:
        del os.environ[name]
    home = Path(tempfile.mkdtemp(prefix="madoi-voice-shots-"))
    os.environ.update({"MADOI_BRIDGE_PORT": "0", "MADOI_LLM_AUTODETECT_LOCAL": "false", "MADOI_CAMERA": "none",
                       "MADOI_VOICE_OUTPUT_DIR": str(home / "speech"),
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    loop = qasync.QEventLoop(app)
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    language = sys.argv[2] if len(sys.argv) > 2 else "en"
    with loop:  # closed on the way out: its executor's threads are joined (else Qt aborts at exit)
        for written in loop.run_until_complete(shoot_voice_input(out, home / "voice", language=language)):
            print(written)
