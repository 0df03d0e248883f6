"""Voice input as the window's user controls it: the status bar's microphone switch, push-to-talk, the message
box as the sender, and the settings tab's device list, microphone test and model download.

- **The switch** (:meth:`RuntimeVoiceInput.set_on`) opens or closes the microphone at once and keeps the choice
  (``[voice_input] on``), as the camera switch does; a microphone left on opens by itself at the next start only
  when the user chose that (``[voice_input] keep_on``, ``wiring.starts_on``).
- **The offer** (:meth:`RuntimeVoiceInput.better_recognizer`): when the user's words were in a language the
  recognizer in use does not understand, the Whisper model that does.
- **The sender** (:meth:`RuntimeVoiceInput.use_sender`): in the window, final words go through the message box (to
  whom the user chose in it); headless, they go to everyone (``app/runtime/assembly.py``).
- **The test** (:func:`listen_to_microphone`) opens the chosen device on its own for a few seconds and reports its
  level as it goes: the settings' level meter.
- **The download** (:func:`download_model`) of a Whisper model, on a thread, with progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.runtime.runtime import Runtime

if TYPE_CHECKING:
    from companions.voice_input.audio import AudioFrame
    from companions.voice_input.events import MicrophoneState
    from companions.voice_input.listening import Sender, VoiceInput


@dataclass(frozen=True)
class RecognizerOffer:
    """A recognizer that understands Japanese as well as English (a Whisper model): ``choice`` (a
    ``RecognizerChoice``), its download's size, and whether it is already downloaded."""

    choice: str
    megabytes: int
    downloaded: bool


@dataclass(frozen=True)
class RuntimeVoiceInput:
    """What the status bar's switch, the talk button and the message box need, on the runtime (before it has
    started the switch only changes the setting)."""

    runtime: Runtime

    def _voice_input(self) -> VoiceInput | None:
        return self.runtime.parts.devices.voice_input if self.runtime.started else None

    def is_on(self) -> bool:
        return self.runtime.settings.voice_input.on

    def state(self) -> tuple[MicrophoneState, str]:
        voice_input = self._voice_input()
        return (voice_input.state, voice_input.reason) if voice_input is not None else ("off", "")

    def mode(self) -> str:
        return self.runtime.settings.voice_input.mode

    def push_to_talk_key(self) -> str:
        return self.runtime.settings.voice_input.push_to_talk_key

    def headset_advised(self) -> bool:
        voice_input = self._voice_input()
        return voice_input is not None and voice_input.echo.headset_advised

    def better_recognizer(self) -> RecognizerOffer | None:
        """The recognizer to offer when the user's words were in a language the one in use does not understand:
        the best Whisper model while the built-in English one is in use; None when Whisper is in use already."""
        from app.voice_input.recognizer_models import installed, recommended

        if self.runtime.settings.voice_input.recognizer != "pocketsphinx":
            return None
        model = recommended()
        return RecognizerOffer(model.choice, model.megabytes, installed(self.runtime.paths.data_dir, model))

    async def set_on(self, on: bool) -> None:
        """Applies the switch at once, then saves it (OSError when the settings cannot be written: it holds for
        this run)."""
        settings = self.runtime.settings
        settings.voice_input.on = on
        if on and settings.voice_input.recognizer == "pocketsphinx":
            from app.voice_input.recognizer_models import machine_speed

            machine_speed.known()  # measured now, on its own thread: the offer of Whisper may come soon
        voice_input = self._voice_input()
        if voice_input is not None:
            await voice_input.switch(on)
        await self.runtime.loaded.save(settings)

    def press(self) -> None:
        voice_input = self._voice_input()
        if voice_input is not None:
            voice_input.press()

    def release(self) -> None:
        voice_input = self._voice_input()
        if voice_input is not None:
            voice_input.release()

    def use_sender(self, send: Sender | None) -> None:
        voice_input = self._voice_input()
        if voice_input is not None:
            voice_input.use_sender(send)


def microphones() -> list[str]:
    """The input devices to choose from (names), without the default ("")."""
    from app.voice_input.microphone import input_devices

    return input_devices()


async def listen_to_microphone(device: str, level: Callable[[float], None], seconds: float = 3.0) -> float:
    """Listens to ``device`` for ``seconds``, calling ``level(dBFS)`` about ten times a second (from the loop);
    returns the loudest level heard. Raises ``MicrophoneUnavailable`` with the reason."""
    from app.voice_input.microphone import build_microphone

    microphone = build_microphone(device)
    loop = asyncio.get_running_loop()
    loudest = [-100.0]
    frames = [0]

    def deliver(frame: AudioFrame) -> None:  # the device's thread
        value = frame.level
        loudest[0] = max(loudest[0], value)
        frames[0] += 1
        if frames[0] % 5 == 0:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(level, value)

    await microphone.open(deliver)
    try:
        await asyncio.sleep(seconds)
    finally:
        await microphone.close()
    return loudest[0]


async def download_model(choice: str, data_dir: Path, progress: Callable[[int, int], None],
                         cancel: threading.Event) -> Path:
    """Downloads the model ``choice`` (a ``RecognizerChoice``) with ``progress(done, total)`` on the loop; raises
    ``DownloadFailed`` with the reason."""
    from app.voice_input.recognizer_models import MODELS, download

    loop = asyncio.get_running_loop()
    shown = [-1]

    def report(done: int, total: int) -> None:  # the download's thread: at most every whole percent
        percent = math.floor(100 * done / total) if total else 0
        if percent != shown[0]:
            shown[0] = percent
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(progress, done, total)

    model = MODELS[choice]  # type: ignore[index]
    return await asyncio.to_thread(download, model, data_dir, progress=report, cancelled=cancel.is_set)
