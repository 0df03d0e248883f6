"""The controller: microphone frames -> detection -> recognition -> the user's message, with barge-in.

Flow (every step on the loop, except recognition, which runs on a thread of its own, in order):

1. The microphone adapter delivers 20 ms frames from its thread; they hop onto the loop.
2. Each frame is *voiced* when the voice-activity port says speech, it is above the sensitivity's level floor, and
   the echo guard does not take it for the companions' own voice (``echo.py``).
3. The detector (``detection.py``) starts an utterance with its pre-roll, or push-to-talk does (:meth:`press`).
   At that moment the companions are interrupted as Esc does (``interrupt``): speech stops and the turn in flight
   is cancelled (barge-in).
4. Frames go to the recognizer as they come; about every 300 ms its partial result is published
   (:class:`SpeechHeard`, ``final=False``) for the message box. A recognizer that decodes whole utterances (not
   ``streaming``) is told once the user has been silent for ``PAUSE_S`` (``pause``: it decodes what it has while
   the end-of-speech silence runs) and the silent frames after it are held back: if the user speaks on they
   follow in order, if the silence ends the utterance they are dropped, and that decoding is the final words.
5. At the end of the utterance (the silence, or the key released) the final words are published and, when the
   settings say so and the recognizer is sure of them, sent as the user's message at once (``send``: the window
   installs its own, which sends from the message box to whom the user chose); otherwise they wait in the box.
   Words the recognizer made of a language it does not speak are neither shown nor sent
   (:class:`SpeechNotUnderstood`): nothing misheard goes out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, TypeVar

from companions.common.tasks import TaskSet
from companions.devices.ports import SpeakingChanged
from companions.voice_input.audio import FRAME_S, SILENT_DBFS, AudioFrame, Microphone, MicrophoneUnavailable
from companions.voice_input.detection import Began, DetectionSettings, Ended, SpeechDetector, VoiceActivity
from companions.voice_input.echo import EchoGuard, EchoHandling
from companions.voice_input.events import (
    EchoAdvice,
    ListeningMode,
    MicrophoneChanged,
    MicrophoneState,
    SpeechHeard,
    SpeechNotUnderstood,
)
from companions.voice_input.recognition import RecognitionSession, Recognized, Recognizer, RecognizerUnavailable
from companions.wire.bus import Bus, BusItem, Subscription

log = logging.getLogger(__name__)
T = TypeVar("T")

PARTIAL_EVERY_S: Final = 0.3
PAUSE_S: Final = 0.2  # silence before the recognizer is told the user paused
_PAUSE_FRAMES: Final = round(PAUSE_S / FRAME_S)
RECUT_AFTER_S: Final = 0.5  # while the user speaks on, a companion's new line is cut again at most this often
Sender = Callable[[str], str]  # sends the words as the user's message; returns the message's id


@dataclass(frozen=True)
class ListeningSettings:
    on: bool = False  # the status bar's microphone switch
    mode: ListeningMode = "hands-free"
    detection: DetectionSettings = field(default_factory=DetectionSettings)
    send_at_end: bool = True  # False: the words wait in the message box
    echo: EchoHandling = "guard"


@dataclass(eq=False)
class _Utterance:
    number: int
    onset: float
    session: RecognitionSession | None = None  # touched on the recognition thread only
    partial_busy: bool = False
    partial_asked: float = 0.0
    shown: str = ""
    ended: bool = False
    silent: int = 0  # silent frames since the last voiced one
    held: list[AudioFrame] = field(default_factory=list)  # silent frames after the pause, not yet recognized


@dataclass(frozen=True)
class BargeIn:
    """The user's voice cut the companions off: ``onset`` is when the user's first voiced frame began, ``at`` when
    the interrupt was given (both monotonic)."""

    onset: float
    at: float


class VoiceInput:
    """A runtime component: owns the microphone while voice input is on, and its recognition thread."""

    name = "voice input"

    def __init__(self, bus: Bus, microphone: Microphone, activity: VoiceActivity, recognizer: Recognizer,
                 settings: ListeningSettings | None = None, *, send: Sender | None = None,
                 interrupt: Callable[[], None] | None = None, words: Callable[[], Iterable[str]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bus = bus
        self.microphone = microphone
        self.activity = activity
        self.recognizer = recognizer
        self.settings = settings or ListeningSettings()
        self._default_send = send
        self._send = send
        self._interrupt = interrupt or (lambda: None)
        self._words = words or (lambda: ())
        self._clock = clock
        self.detector = SpeechDetector(self.settings.detection)
        self.echo = EchoGuard(self.settings.echo, self.settings.detection.echo_margin_db)
        self.activity.set_mode(self.settings.detection.vad_mode)
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="speech-recognition")
        self._tasks = TaskSet("voice-input")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._subscription: Subscription | None = None
        self._open = False
        self._prepared = False
        self._state: MicrophoneState = "off"
        self._reason = ""
        self._utterance: _Utterance | None = None
        self._count = 0
        self._pressed = False
        self._speaking: set[str] = set()
        self._advised = False
        self.level = SILENT_DBFS  # the last frame's level (the settings' meter)
        self.barge_ins: list[BargeIn] = []
        self.sent_after: list[float] = []  # seconds from the end of the user's speech to the message sent
        self.last_speech_end = 0.0
        self._last_cut = -1e9

    # -- state ---------------------------------------------------------------------------------------------
    @property
    def state(self) -> MicrophoneState:
        return self._state

    @property
    def reason(self) -> str:
        return self._reason

    def _set_state(self, state: MicrophoneState, reason: str = "") -> None:
        if (state, reason) == (self._state, self._reason):
            return
        self._state, self._reason = state, reason
        self.bus.publish(MicrophoneChanged(state, reason, self.microphone.source, self.settings.mode))

    # -- component -----------------------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._subscription = self.bus.subscribe("events", self._on_event, name="voice-input", direct=True)
        self.bus.publish(MicrophoneChanged("off", "", self.microphone.source, self.settings.mode))
        if self.settings.on:
            await self._open_microphone()

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        await self._close_microphone()
        await self._tasks.cancel_all()
        await asyncio.to_thread(self._thread.shutdown, True, cancel_futures=True)
        self.recognizer.close()

    # -- what the user controls ----------------------------------------------------------------------------
    async def switch(self, on: bool) -> None:
        """The status bar's one-click mute: off closes the microphone at once (nothing is heard any more)."""
        self.settings = ListeningSettings(on, self.settings.mode, self.settings.detection,
                                          self.settings.send_at_end, self.settings.echo)
        if on:
            await self._open_microphone()
        else:
            await self._close_microphone()

    async def configure(self, settings: ListeningSettings, microphone: Microphone | None = None,
                        recognizer: Recognizer | None = None) -> None:
        """New settings (from the next frame); a new device or recognizer is opened in place of the old."""
        changed_device = microphone is not None or recognizer is not None
        if changed_device:
            await self._close_microphone()
            if microphone is not None:
                self.microphone = microphone
            if recognizer is not None:
                old, self.recognizer = self.recognizer, recognizer
                self._prepared = False
                await asyncio.get_running_loop().run_in_executor(self._thread, old.close)
        self.settings = settings
        self.detector.configure(settings.detection)
        self.echo.handling, self.echo.margin_db = settings.echo, settings.detection.echo_margin_db
        self.activity.set_mode(settings.detection.vad_mode)
        if settings.on and not self._open:
            await self._open_microphone()
        elif not settings.on and self._open:
            await self._close_microphone()
        else:  # the mode may have changed: the window says how to talk now
            self.bus.publish(MicrophoneChanged(self._state, self._reason, self.microphone.source, settings.mode))

    def use_sender(self, send: Sender | None) -> None:
        """Who sends the final words (the window: from its message box); None: back to the default."""
        self._send = send if send is not None else self._default_send

    def press(self) -> None:
        """Push-to-talk pressed: the user speaks from now (with the pre-roll before it); the companions stop."""
        if not self._open or self._pressed:
            return
        self._pressed = True
        if not self.detector.speaking:
            self._begin(self.detector.begin_now())

    def release(self) -> None:
        """Push-to-talk released: the utterance ends now."""
        if not self._pressed:
            return
        self._pressed = False
        ended = self.detector.end_now(self._clock())
        if ended is not None:
            self._end(ended)

    # -- the companions' voice -------------------------------------------------------------------------------
    def hear_playback(self, pcm: bytes, at: float) -> None:
        """The speaker starts playing ``pcm`` (16 kHz mono int16) at ``at`` (monotonic); from the loop."""
        self.echo.play(pcm, at)

    def playback_stopped(self, at: float) -> None:
        self.echo.stopped(at)

    def _on_event(self, item: BusItem) -> None:
        if isinstance(item, SpeakingChanged):
            if item.speaking:
                self._speaking.add(item.speaker_id)
            else:
                self._speaking.discard(item.speaker_id)

    # -- the microphone --------------------------------------------------------------------------------------
    async def _open_microphone(self) -> None:
        if self._open:
            return
        try:
            if not self._prepared:
                await self._run(self._prepare)
                self._prepared = True
            await self.microphone.open(self._deliver)
        except (MicrophoneUnavailable, RecognizerUnavailable) as err:
            log.warning("voice input: %s", err)
            self._set_state("unavailable", str(err))
            return
        except Exception as err:  # an adapter's bug: said like any other reason, the app goes on
            log.exception("voice input could not start")
            self._set_state("unavailable", f"voice input could not start: {err}")
            return
        self._open = True
        self.detector.reset()
        self._set_state("listening")

    def _prepare(self) -> None:
        self.recognizer.prepare()
        self.recognizer.use_words(self._words())

    async def _close_microphone(self) -> None:
        was_open, self._open = self._open, False
        self._pressed = False
        if was_open:
            await self.microphone.close()
        if self._utterance is not None and not self._utterance.ended:
            self._utterance.ended = True  # dropped: nothing half-heard is sent
            self._thread.submit(self._drop_session, self._utterance)
        self._utterance = None
        self.detector.reset()
        self.level = SILENT_DBFS
        if self._state != "unavailable" or was_open:
            self._set_state("off")

    def _deliver(self, frame: AudioFrame) -> None:
        """From the microphone's thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(self._on_frame, frame)

    def _on_frame(self, frame: AudioFrame) -> None:
        if not self._open:
            return
        self.level = frame.level
        if self._pressed:
            self._feed(frame)
            return
        voiced = self.settings.mode == "hands-free" and self._voiced(frame)
        outcome = self.detector.frame(frame, voiced)
        if isinstance(outcome, Began):
            self._begin(outcome)
        elif isinstance(outcome, Ended):
            self._end(outcome)
        elif outcome is not None:
            self._feed(outcome, voiced)

    def _voiced(self, frame: AudioFrame) -> bool:
        detection = self.settings.detection
        if self.level < detection.floor_dbfs or not self.activity.is_speech(frame.pcm):
            return False
        if self.settings.echo == "pause" and self._speaking:
            return False  # a voice played by someone else than this app's speaker (a bridge client) counts too
        allowed = self.echo.allows(frame, learn=not self.detector.speaking)
        if self.echo.headset_advised != self._advised:
            self._advised = self.echo.headset_advised
            self.bus.publish(EchoAdvice(self._advised, round(self.echo.coupling_db, 1)))
        if allowed and self.detector.speaking and self.echo.playing(frame.at) \
                and frame.at - self._last_cut >= RECUT_AFTER_S:
            self._cut(frame.at)  # a companion began to speak while the user still talks: the user goes first
        return allowed

    def _cut(self, onset: float) -> None:
        self._last_cut = onset
        self._interrupt()  # barge-in: the companions stop as for Esc
        self.barge_ins.append(BargeIn(onset, self._clock()))

    # -- an utterance ----------------------------------------------------------------------------------------
    def _begin(self, began: Began) -> None:
        self._count += 1
        utterance = self._utterance = _Utterance(self._count, began.onset, partial_asked=began.onset)
        self._cut(began.onset)
        self._set_state("hearing")
        self._thread.submit(self._start_session, utterance)
        for frame in began.frames:
            self._thread.submit(self._accept, utterance, frame.pcm)

    def _feed(self, frame: AudioFrame, voiced: bool = True) -> None:
        utterance = self._utterance
        if utterance is None or utterance.ended:
            return
        if voiced or self.recognizer.streaming:
            utterance.silent = 0
            for held in utterance.held:  # the user spoke on after a pause: nothing of it is lost
                self._thread.submit(self._accept, utterance, held.pcm)
            utterance.held.clear()
        elif utterance.silent >= _PAUSE_FRAMES:
            utterance.held.append(frame)
            return
        else:
            utterance.silent += 1
            if utterance.silent == _PAUSE_FRAMES:
                self._thread.submit(self._accept, utterance, frame.pcm)
                self._thread.submit(self._pause, utterance)
                return
        self._thread.submit(self._accept, utterance, frame.pcm)
        if not utterance.partial_busy and frame.end - utterance.partial_asked >= PARTIAL_EVERY_S:
            utterance.partial_busy, utterance.partial_asked = True, frame.end  # every 300 ms of the user's audio
            self._tasks.spawn(self._partial(utterance), name="speech-partial")

    def _end(self, ended: Ended) -> None:
        utterance = self._utterance
        if utterance is None or utterance.ended:
            return
        utterance.ended = True
        self.last_speech_end = ended.speech_end
        self._set_state("recognising")
        self._tasks.spawn(self._final(utterance, ended.speech_end), name="speech-final")

    async def _partial(self, utterance: _Utterance) -> None:
        try:
            text = await self._run(self._partial_text, utterance)
        finally:
            utterance.partial_busy = False
        if text and text != utterance.shown and not utterance.ended:
            utterance.shown = text
            self.bus.publish(SpeechHeard(utterance.number, text, final=False))

    async def _final(self, utterance: _Utterance, speech_end: float) -> None:
        try:
            result = await self._run(self._finish, utterance)
        except Exception:
            log.exception("speech recognition failed")
            result = Recognized("")
        text, confidence = result.text.strip(), result.confidence
        if utterance is self._utterance:
            self._utterance = None
            if self._open:
                self._set_state("hearing" if self.detector.speaking else "listening")
        if not text or result.certainty == "foreign":
            if utterance.shown:  # the partial words shown go away with the utterance
                self.bus.publish(SpeechHeard(utterance.number, "", final=True))
            if text:  # nonsense made of another language: said, never shown or sent
                log.info("voice input: not understood (confidence %s)", confidence)
                self.bus.publish(SpeechNotUnderstood(utterance.number, self.recognizer.languages, confidence))
            return
        unsure = result.certainty == "unsure"
        send = self._send if self.settings.send_at_end and not unsure else None
        if send is None:
            self.bus.publish(SpeechHeard(utterance.number, text, final=True, unsure=unsure, confidence=confidence))
            return
        try:
            message_id = send(text)
        except Exception as err:  # the words stay in the box for the user
            log.warning("voice input: the message could not be sent: %s", err)
            self.bus.publish(SpeechHeard(utterance.number, text, final=True, confidence=confidence))
            return
        self.sent_after.append(self._clock() - speech_end)
        self.bus.publish(SpeechHeard(utterance.number, text, final=True, sent=True, message_id=message_id,
                                     confidence=confidence))

    # -- the recognition thread ------------------------------------------------------------------------------
    async def _run(self, function: Callable[..., T], *args: object) -> T:
        return await asyncio.wrap_future(self._thread.submit(function, *args))

    def _start_session(self, utterance: _Utterance) -> None:
        if not utterance.ended or utterance.session is None:
            utterance.session = self.recognizer.begin()

    def _accept(self, utterance: _Utterance, pcm: bytes) -> None:
        if utterance.session is not None:
            utterance.session.accept(pcm)

    def _pause(self, utterance: _Utterance) -> None:
        if utterance.session is not None:
            try:
                utterance.session.pause()
            except Exception:  # the final decoding will say it again
                log.exception("speech recognition failed at a pause")

    def _partial_text(self, utterance: _Utterance) -> str:
        return utterance.session.partial() if utterance.session is not None else ""

    def _finish(self, utterance: _Utterance) -> Recognized:
        if utterance.session is None:
            return Recognized("")
        session, utterance.session = utterance.session, None
        return session.finish()

    def _drop_session(self, utterance: _Utterance) -> None:
        session, utterance.session = utterance.session, None
        if session is not None:
            with contextlib.suppress(Exception):
                session.finish()
