"""The speaker: one dedicated thread owns pyttsx3's engine and works through a queue of utterances.

Two engines: Open JTalk's voice Mei (app/devices/openjtalk_voice.py) says Japanese lines, unless the line's voice
names a system voice or ``engine=system``; pyttsx3 (the system's voices: espeak-ng, SAPI5, NSSpeechSynthesizer)
says the others, and Japanese ones when Open JTalk is missing (then read as kana first: japanese_reading.py). The
utterance's voice carries the companion card's tuning (app/devices/voice_spec.py): its rate, half-tone and all-pass
constant, applied to whichever engine says the line. One engine missing leaves the other speaking (the status says
which lines go unsaid); both missing is "no speech engine".

A line whose voice names a VOICEVOX-compatible engine (``voicevox:3``, app/devices/voice_spec.py) is said by that
engine (app/devices/voicevox.py), found in the background after the start (app/devices/voicevox_discovery.py: the
known local engines and the URLs the user gave). It renders on its own thread (``speaker-voicevox``) exactly as Open
JTalk does: each chunk (a sentence or two) is synthesised while the one before it plays, and the next line's first
chunk while a line's last one plays. The highlight of the line being said (``SpeakingChanged``) comes on when the
engine's audio starts, not while it synthesises, and each chunk's mora timing (the engine's own, from its audio
query) is published as :class:`~app.devices.voicevox.MorasSpoken` as the chunk starts. An engine that is gone, or
that answers wrongly, never fails a line: the rest of it is said by the default voice, and the status says why once
(the engine is tried again after :data:`ENGINE_RETRY_S`). While no engine speaks, they are looked for again every
:data:`ENGINES_SEARCH_S`: VOICEVOX started after Madoi is found, and its voices offered, without a restart.

A line whose voice names one of Kokoro's (``kokoro:jf_alpha``) is said by the neural voice Kokoro-82M once it was
downloaded (app/devices/kokoro_files.py, app/devices/kokoro_voice.py): it loads on its own thread
(``speaker-kokoro``) just after the start when a companion's voice in the settings is Kokoro's
(:attr:`Pyttsx3Speaker.kokoro_at_start`: ~2 s and ~220 MB, not paid by those who do not use it), else when a line
first asks for it, and renders as
VOICEVOX's engines do, sentence by sentence, each while the one before it plays, the highlight coming on with its
audio. Not downloaded (or failing to load), its lines are said by the default voice and the status says how to get
it, once.

Open JTalk loads just after the start (~0.4 s: not within the app's start; a first line waits for it) and renders on
its own thread (``speaker-openjtalk``), sentence by sentence (the first cut after its first clause; at most
:data:`OPENJTALK_CHUNK_CHARS` letters a chunk): the next chunk of a line renders while the speaker thread plays the
current one, and the first chunk of the utterance queued next while a line's last chunk plays
(:meth:`Pyttsx3Speaker._look_ahead`): no silence between chunks, nor between the sentences of a line said as it is
written.

What pyttsx3 2.99 with espeak-ng does here (and why this module is shaped the way it is):
- ``pyttsx3.init()`` returns one engine per process (espeak can be initialised once), not thread-safe: only the
  speaker thread touches it, and only one speaker may own it at a time (:data:`_ENGINE_OWNER`).
- The espeak driver synthesises asynchronously (AUDIO_OUTPUT_RETRIEVAL): ``runAndWait()`` returns before a long
  text is done, and ``finished-utterance`` (``completed=True``) arrives later from espeak's thread, after the WAV
  is written; spurious ``completed=False`` notices also arrive. So the thread waits for ``completed=True``.
- Its audio buffer grows quadratically and texts of a few thousand characters crash espeak (segfault): texts are
  rendered sentence by sentence (:func:`split_for_speech`), which also makes interruption quick.
- Its playback is ``aplay`` run inside the synthesis callback, which ``stop()`` cannot interrupt: every chunk is
  rendered with ``save_to_file`` and played by :class:`~app.devices.audio_output.WavPlayer`, which can be stopped.

Output: ``output_dir=None`` plays aloud; with a directory each utterance becomes one WAV file there instead (tests
and "record speech" use it). No audio device (no player, or the player fails): reported once (log + a
:class:`DeviceStatus` on the bus), then utterances are skipped with ``success=True, skipped=True`` so that the
conversation never waits on a missing sound card.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import logging
import queue
import re
import shutil
import tempfile
import threading
import time
import wave
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from app.devices.audio_output import AudioDeviceError, WavPlayer, find_player
from app.devices.japanese_reading import contains_japanese, to_kana
from app.devices.kokoro_files import KOKORO_FILES, KokoroFiles, kokoro_installed, kokoro_paths
from app.devices.kokoro_voice import JAPANESE_VOICES, KokoroUnavailable, KokoroVoice, voice_name
from app.devices.openjtalk_voice import OpenJTalkUnavailable, OpenJTalkVoice
from app.devices.tts_engine import MAX_CHUNK_CHARS, quiet_driver_prints, split_for_speech, wait_idle
from app.devices.voice_spec import DEFAULT_RATE, VoiceSpec, parse_voice_spec
from app.devices.voices import OPENJTALK_MEI, EngineVoice, choose_voice, engine_voices
from app.devices.voicevox import MorasSpoken, MoraTiming, VoicevoxEngine, VoicevoxProblem, is_loopback
from app.devices.voicevox_discovery import EngineSearch, FoundEngine, find_engines
from companions.common.private_files import new_private_dir, private_file
from companions.devices.ports import DeviceStatus, SpeakingChanged, Utterance
from companions.devices.query_bodies import SpeakResult
from companions.wire.bus import Bus
from companions.wire.protocol import Emotion

log = logging.getLogger(__name__)

FINISH_TIMEOUT_S: Final = 15.0
# Emotion -> (rate factor, volume factor, espeak pitch 0-99). Sad is slow and soft, happy and angry quick.
EMOTION_PROSODY: Final[dict[Emotion, tuple[float, float, int]]] = {
    "neutral": (1.0, 1.0, 50),
    "happy": (1.12, 1.0, 68),
    "sad": (0.82, 0.7, 35),
    "angry": (1.18, 1.0, 42),
}
# Open JTalk renders a chunk whole before it plays (~0.1 s per second of speech): sentences, an early first word.
OPENJTALK_CHUNK_CHARS: Final = 80
RENDER_POLL_S: Final = 0.02  # how often a wait for Open JTalk's chunk looks for an interruption
SEMITONES_PER_ESPEAK_PITCH: Final = 1 / 4  # espeak's pitch 0-99: about four steps to a semitone around 50
# Emotion -> semitones on Open JTalk's Mei (espeak's pitch steps above would be 4.5 semitones for happy: shrill).
EMOTION_HALF_TONE: Final[dict[Emotion, float]] = {"neutral": 0.0, "happy": 1.5, "sad": -1.5, "angry": -0.5}
# A VOICEVOX-compatible engine renders a chunk whole too (a network round trip and its model): sentences, not lines.
VOICEVOX_CHUNK_CHARS: Final = 60
ENGINE_RETRY_S: Final = 30.0  # an engine that failed is tried again after this (the default voice says lines until)
ENGINES_SEARCH_S: Final = 30.0  # while none speaks (or one failed), the engines are looked for again this often
ENGINES_WAIT_S: Final = 3.0  # a line for an engine waits this long at most for the search after the start
KOKORO_CHUNK_CHARS: Final = 60  # Kokoro renders a chunk whole (~0.45 of its length on two cores): sentences
KOKORO_FIRST_CHARS: Final = 12  # a line's first sentence longer than this is cut at its first comma: the first audio
_COMMA: Final = re.compile(r"(?<=[、,，])")  # waits for a clause, not a sentence
PITCH_SCALE_PER_SEMITONE: Final = 0.015  # VOICEVOX's pitchScale multiplies log F0 (~5.5) by 2**pitchScale
_SENTENCE_END: Final = re.compile(r"(?<=[。！？!?…\n])\s*|(?<=[.])\s+")
_ENGINE_OWNER = threading.Lock()  # the process has one pyttsx3 engine: one speaker thread at a time owns it


@dataclass(eq=False)
class _Job:
    utterance: Utterance
    future: concurrent.futures.Future[SpeakResult]
    generation: int


@dataclass(frozen=True)
class _Plan:
    """How Open JTalk or a VOICEVOX engine says an utterance: its chunks and the voice's tuning
    (OpenJTalkVoice.write_wav's, or the engine, its style and VoicevoxEngine.render's)."""

    chunks: list[str]
    tuning: dict[str, Any]
    engine: str = "openjtalk"

    @property
    def voice_id(self) -> str:
        if self.engine == "voicevox":
            return f"voicevox:{self.tuning['style']}@{self.tuning['engine'].address}"
        if self.engine == "kokoro":
            return f"kokoro:{self.tuning['voice']}"
        return "openjtalk/mei"


@dataclass(frozen=True)
class _EngineFailed(Exception):
    """A VOICEVOX engine (or Kokoro) failed at chunk ``index`` of a line."""

    index: int
    problem: VoicevoxProblem | KokoroUnavailable


class _Interrupted(Exception):
    pass


class Pyttsx3Speaker:
    """A runtime Component and the :class:`companions.devices.ports.Speaker` adapter."""

    name = "speaker"

    def __init__(self, bus: Bus | None = None, *, output_dir: Path | None = None, rate: int = 170,
                 volume: float = 1.0, player: Sequence[str] | None = None, driver_name: str | None = None,
                 engine_urls: Sequence[str] = (), find_local_engines: bool = False,
                 data_dir: Path | None = None) -> None:
        self._bus = bus
        self._output_dir = output_dir
        self.rate, self.volume = rate, volume  # the settings' (the next utterance takes a new value)
        self._player_command = tuple(player) if player is not None else None
        self._driver_name = driver_name
        self.enabled = True
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._current: _Job | None = None  # the job being spoken (guarded by _wake)
        self._generation = 0
        self._wake = threading.Condition()
        self._finished = 0  # completed=True notices from the engine
        self._unfinished = 0  # the notice count an interrupted chunk will bring once espeak is done with it
        self._thread: threading.Thread | None = None
        self._player: WavPlayer | None = None
        self._audio_problem: str | None = None
        self._status = DeviceStatus("speaker", False, "no audio device: not started")
        self._voices: list[Any] = []  # Mei and the system's (:attr:`voices` adds the engines')
        self._system_voices: list[Any] = []  # pyttsx3's
        self.openjtalk_enabled = True  # False: Japanese lines go to the system voice too
        self._openjtalk: OpenJTalkVoice | None = None  # once started, when it loaded; used on _renderer only
        self._renderer: concurrent.futures.ThreadPoolExecutor | None = None
        self._ahead: tuple[_Job | None] | None = None  # the job (or stop mark) taken from the queue early
        # That job, how Open JTalk says it, and its first chunk rendering there
        self._rendered_ahead: tuple[_Job, _Plan, Path, concurrent.futures.Future[float]] | None = None
        self._openjtalk_problem: str | None = None
        self._system_problem: str | None = None  # why pyttsx3 does not speak (then Open JTalk alone does)
        self._logged: set[str] = set()
        self.espeak = False
        self._count = 0
        self._scratch: Path | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Called on the speaker thread with each WAV file as it starts playing, and None when it stops.
        self.playback_listeners: list[Callable[[Path | None], None]] = []
        # VOICEVOX-compatible engines: the URLs the user gave, whether the local ones are looked for, what was found
        self.engine_urls, self.find_local_engines = tuple(engine_urls), find_local_engines
        self.engine_search = EngineSearch()
        self._engines: list[tuple[VoicevoxEngine, FoundEngine]] = []
        self._engine_voices: list[EngineVoice] = []
        self._engines_known = threading.Event()
        self._engine_failed: dict[str, float] = {}  # address -> when it failed (monotonic)
        self._voicevox_renderer: concurrent.futures.ThreadPoolExecutor | None = None
        self._moras: dict[Path, tuple[MoraTiming, ...]] = {}  # a rendered chunk's timing, until it plays
        self._search_task: asyncio.Task[None] | None = None
        self._unannounced: str | None = None  # a speaker whose SpeakingChanged waits for its audio to start
        self._notices: dict[str, str] = {}  # the engines' problems shown in the status, by address
        # Kokoro: the downloaded files under data_dir (None: not looked for), and its voice once asked to load
        self.data_dir = data_dir
        self.kokoro_files: KokoroFiles = KOKORO_FILES
        self._kokoro: KokoroVoice | None = None
        self._kokoro_renderer: concurrent.futures.ThreadPoolExecutor | None = None
        self._kokoro_problem: str | None = None
        self.kokoro_at_start = False  # load Kokoro just after the start (a companion's voice is Kokoro's)
        self._kokoro_lock = threading.Lock()  # the speaker thread and the settings may start it at once

    @property
    def voices(self) -> list[Any]:
        """The voices a companion may be given, once started: Mei, Kokoro's (once downloaded), the engines' styles,
        then the system's."""
        base = list(self._voices)
        mei = [v for v in base if v is OPENJTALK_MEI]
        return [*mei, *self.kokoro_voices, *self._engine_voices, *(v for v in base if v is not OPENJTALK_MEI)]

    @voices.setter
    def voices(self, value: list[Any]) -> None:
        self._voices = [v for v in value if not (isinstance(v, EngineVoice) and v.id.startswith("voicevox"))]

    @property
    def kokoro_voices(self) -> list[EngineVoice]:
        """Kokoro's Japanese voices, when its files are downloaded (and did not fail to load)."""
        if not self.kokoro_downloaded or self._kokoro_problem is not None:
            return []
        names = self._kokoro.voices if self._kokoro is not None and self._kokoro.loaded else list(JAPANESE_VOICES)
        return [EngineVoice(f"kokoro:{name}", voice_name(name), ("ja",)) for name in names]

    @property
    def kokoro_downloaded(self) -> bool:
        return self.data_dir is not None and kokoro_installed(self.data_dir, self.kokoro_files)

    @property
    def engines(self) -> list[FoundEngine]:
        """The VOICEVOX-compatible engines that speak (known once the search after the start is over)."""
        return [found for _, found in self._engines]

    async def find_engines(self) -> EngineSearch:
        """Looks for the engines again (the settings' URLs, and the local ones when asked); their voices replace
        the last search's. Never raises."""
        try:
            search = await find_engines(self.engine_urls, find_local=self.find_local_engines)
        except Exception:  # a bug in a probe must not stop the speaker
            log.exception("the voice engines' search failed")
            search = EngineSearch()
        old = self._engines
        self._engines = [(VoicevoxEngine(found.base_url, found.name), found) for found in search.usable
                         if found.given or is_loopback(found.base_url)]
        self._engine_voices = engine_voices(self.engines)
        self.engine_search = search
        self._engine_failed.clear()
        self._notices.clear()
        self._engines_known.set()
        for engine, _ in old:
            engine.close()
        if self._audio_problem is None and self._thread is not None:
            self._engines_status()
        return search

    async def _search_engines(self) -> None:
        """The search after the start, then again every :data:`ENGINES_SEARCH_S` while no engine speaks or one
        failed: VOICEVOX started after Madoi is found (two refused connections a minute cost nothing)."""
        await self.find_engines()
        while True:
            await asyncio.sleep(ENGINES_SEARCH_S)
            if not self._engines or self._engine_failed:
                await self.find_engines()

    async def engines_searched(self) -> list[FoundEngine]:
        """The engines that speak, once the search the start began is over."""
        await asyncio.to_thread(self._engines_known.wait, ENGINES_WAIT_S + 2)
        return self.engines

    @property
    def status(self) -> DeviceStatus:
        return self._status

    # -- Component ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        if not self.enabled:
            self._report_audio_problem("speech is turned off in the settings")
            return
        if self._output_dir is not None:
            new_private_dir(self._output_dir)
        else:
            command = self._player_command or find_player()
            if command is None:
                self._report_audio_problem("no audio device: no audio player (pw-play, paplay, aplay) found")
            else:
                self._player = WavPlayer(command)
        self._scratch = Path(tempfile.mkdtemp(prefix="madoi-speech-"))
        if self.engine_urls or self.find_local_engines:  # in the background: the start never waits for probes
            self._search_task = asyncio.get_running_loop().create_task(self._search_engines(),
                                                                       name="voice-engines-search")
        else:
            self._engines_known.set()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="speaker", daemon=True)
        self._thread.start()
        await asyncio.to_thread(ready.wait, 5.0)

    async def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self.interrupt()
        self._jobs.put(None)
        await asyncio.to_thread(thread.join, 1.0)  # interrupted above: only the current chunk can delay it
        if self._search_task is not None:
            self._search_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._search_task
        for engine, _ in self._engines:
            engine.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    # -- Speaker port ------------------------------------------------------------------------------------------

    async def speak(self, utterance: Utterance) -> SpeakResult:
        if self._audio_problem is not None:  # reported once already; skip without synthesising
            return SpeakResult(success=True, skipped=True, reason=self._audio_problem)
        if self._thread is None:
            return SpeakResult(success=True, skipped=True, reason="the speaker is not running")
        future: concurrent.futures.Future[SpeakResult] = concurrent.futures.Future()
        job = _Job(utterance, future, self._generation)
        self._jobs.put(job)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._abandon(job)  # e.g. the companion's turn was cut off by the user: its voice stops now
            raise

    def _abandon(self, job: _Job) -> None:
        """Drops a queued job, or stops the one being spoken at once (synthesis or playback). Any thread."""
        job.future.cancel()
        with self._wake:
            current = self._current is job
            self._wake.notify_all()
        player = self._player
        if current and player is not None:
            player.stop()

    def interrupt(self) -> None:
        """Stops the current utterance (within one chunk's synthesis) and drops the queued ones. Any thread."""
        with self._wake:
            self._generation += 1
            self._wake.notify_all()
        player = self._player
        if player is not None:
            player.stop()

    # -- the speaker thread ------------------------------------------------------------------------------------

    def _run(self, ready: threading.Event) -> None:
        # A previous speaker may still be stopping: its last chunk can hold the engine for as long as a chunk may
        # take (on a loaded machine a 1 s wait gave up, and speech stayed off for the whole session).
        owned = _ENGINE_OWNER.acquire(timeout=FINISH_TIMEOUT_S)
        engine: Any = None
        token = None
        try:
            if not owned:
                self._system_problem = "no speech engine: another speaker owns the system voices"
            else:
                try:
                    engine = self._start_engine()
                    token = engine.connect("finished-utterance", self._on_finished)
                except Exception as err:  # missing espeak-ng / SAPI: Open JTalk may still speak Japanese
                    engine = None
                    self._system_problem = f"no speech engine: {err}"
            if engine is None:  # then Open JTalk alone speaks, if it loads: known before the start is over
                self._openjtalk = self._start_openjtalk()
                if self._openjtalk is None:
                    self._fail_all(ready, f"{self._system_problem}; {self._openjtalk_problem}")
                    return
            elif self.openjtalk_enabled and _installed("pyopenjtalk"):
                self.voices = [OPENJTALK_MEI, *self.voices]  # offered now, loaded just after the start
            self._engines_status()
            ready.set()
            if engine is not None:
                # Its dictionary and voice take ~0.4 s to load: not within the app's start. A first line waits.
                self._openjtalk = self._start_openjtalk()
                self._engines_status()
            if self.kokoro_at_start:
                self._start_kokoro()  # loads on its own thread: the first Kokoro line waits for it, nothing else does
            try:
                self._serve(engine)
            except Exception as err:  # a bug here must not leave callers waiting forever
                log.exception("the speaker thread failed")
                self._fail_all(ready, f"no speech engine: the speaker failed ({err})")
        finally:
            if self._renderer is not None:
                self._renderer.shutdown(wait=False, cancel_futures=True)
            if self._voicevox_renderer is not None:
                self._voicevox_renderer.shutdown(wait=False, cancel_futures=True)
            if self._kokoro_renderer is not None:
                self._kokoro_renderer.shutdown(wait=False, cancel_futures=True)
            if engine is not None and token is not None:
                engine.disconnect(token)
            if owned:
                _ENGINE_OWNER.release()

    def _start_engine(self) -> Any:
        """pyttsx3's engine (the system's voices), idle and quiet."""
        import pyttsx3

        engine = pyttsx3.init(self._driver_name)
        self._system_voices = list(engine.getProperty("voices") or [])
        self.voices = [*self.voices, *self._system_voices]
        self.espeak = type(engine.proxy._driver).__name__ == "EspeakDriver"
        if self.espeak:
            quiet_driver_prints(engine.proxy._driver)
        # A new engine starts "busy", which would queue the first utterance's properties inside pyttsx3 and
        # apply them during runAndWait, just before its stop() cancels them in espeak: start idle instead.
        if not engine._inLoop:
            engine.proxy.setBusy(False)
        return engine

    def _start_openjtalk(self) -> OpenJTalkVoice | None:
        if not self.openjtalk_enabled:
            self._openjtalk_problem = "Open JTalk is turned off"
            return None
        assert self._scratch is not None
        voice = OpenJTalkVoice(self._scratch)
        # Open JTalk's own thread: it renders a line's next chunk while this thread plays the current one.
        renderer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="speaker-openjtalk")
        try:
            renderer.submit(voice.load).result()
        except OpenJTalkUnavailable as err:
            renderer.shutdown(wait=False)
            self._openjtalk_problem = str(err)
            self.voices = [v for v in self.voices if v is not OPENJTALK_MEI]
            return None
        if OPENJTALK_MEI not in self.voices:
            self.voices = [OPENJTALK_MEI, *self.voices]
        self._renderer = renderer
        return voice

    def _start_kokoro(self) -> bool:
        """Kokoro's voice and its thread, loading there, when its files are downloaded: True when it may speak.
        Any thread (the speaker's at the start; a line's plan after a download)."""
        with self._kokoro_lock:
            if self._kokoro is not None:
                return self._kokoro_problem is None
            if self.data_dir is None or not self.kokoro_downloaded:
                return False
            model, voices = kokoro_paths(self.data_dir, self.kokoro_files)
            voice = KokoroVoice(model, voices)
            self._kokoro_renderer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="speaker-kokoro")
            self._kokoro = voice
            self._kokoro_renderer.submit(self._load_kokoro, voice)
            return True

    def preload_kokoro(self) -> None:
        """Starts loading Kokoro now (a companion was just given one of its voices), when the speaker runs."""
        self.kokoro_at_start = True
        if self._thread is not None and self._audio_problem is None:
            self._start_kokoro()

    def _load_kokoro(self, voice: KokoroVoice) -> None:
        began = time.monotonic()
        try:
            voice.load()
        except KokoroUnavailable as err:
            self._kokoro_problem = str(err)
            log.warning("speech: %s", err)
            return
        log.info("speech: Kokoro loaded in %.1f s (%d voices)", time.monotonic() - began, len(voice.voices))

    def _engines_status(self) -> None:
        for problem in (self._system_problem, self._openjtalk_problem):
            if problem and problem not in self._logged:
                self._logged.add(problem)
                log.warning("speech: %s", problem)
        if self._audio_problem is None:
            self._set_status(DeviceStatus("speaker", True, self.engines_note(),
                                          "files" if self._output_dir else "device"))

    @property
    def openjtalk_available(self) -> bool:
        """Open JTalk's Mei says Japanese lines (known once started)."""
        return self._openjtalk is not None

    def engines_note(self) -> str:
        """What works partly, for a person ("" when both engines speak)."""
        notes = list(self._notices.values())
        if self._system_problem:
            notes.append(f"{self._system_problem}: only Japanese lines are said (by Open JTalk)")
        if self._openjtalk_problem and self._system_problem is None:
            notes.append(f"{self._openjtalk_problem}: Japanese lines are said by the system voice")
        return "; ".join(notes)

    def _fail_all(self, ready: threading.Event, reason: str) -> None:
        self._report_audio_problem(reason)
        ready.set()
        taken, after = self._take_next()
        if taken and after is None:
            return
        if after is not None:
            _resolve(after, SpeakResult(success=True, skipped=True, reason=reason))
        while (job := self._jobs.get()) is not None:
            _resolve(job, SpeakResult(success=True, skipped=True, reason=reason))

    def _serve(self, engine: Any) -> None:
        """Speaks the queued jobs in order. A companion's consecutive utterances (one per sentence of a line) are
        one speech: ``SpeakingChanged(False)`` comes only when nothing of the same speaker is queued after it."""
        speaking: str | None = None
        follows: _Job | None = None
        stopping = False
        while not stopping:
            job = follows if follows is not None else self._jobs.get()
            follows = None
            if job is None:
                break
            if job.future.done() or job.generation != self._generation or self._audio_problem is not None:
                if job.generation != self._generation:
                    _resolve(job, SpeakResult(success=False, interrupted=True,
                                               reason="interrupted before it began"))
                elif self._audio_problem is not None:
                    _resolve(job, SpeakResult(success=True, skipped=True, reason=self._audio_problem))
                if speaking is not None and self._jobs.empty():
                    if self._unannounced is None:
                        self._publish(SpeakingChanged(speaking, False))
                    self._unannounced = None
                    speaking = None
                continue
            if speaking != job.utterance.speaker_id:
                if speaking is not None:
                    self._publish(SpeakingChanged(speaking, False))
                speaking = job.utterance.speaker_id
                spec = parse_voice_spec(job.utterance.voice)
                if spec.names_voicevox or (spec.names_kokoro and self._kokoro is not None):
                    self._unannounced = speaking  # the highlight comes with the engine's audio, not its synthesis
                else:
                    self._publish(SpeakingChanged(speaking, True))
            with self._wake:
                self._current = job
            try:
                result = self._say(engine, job)
            except Exception as err:
                log.exception("speech failed")
                result = SpeakResult(success=False, reason=f"speech failed: {err}")
            finally:
                with self._wake:
                    self._current = None
            taken, after = self._take_next()
            if taken:
                follows = after
                # The stop mark taken here ends the loop after this job: read again, it would block for ever and
                # the engine would stay owned by this stopped speaker (no speech for any later one).
                stopping = follows is None
            if result.interrupted or follows is None or follows.utterance.speaker_id != speaking:
                if self._unannounced is None:  # never announced (nothing was heard): nothing to end
                    self._publish(SpeakingChanged(speaking, False))
                self._unannounced = None
                speaking = None
            _resolve(job, result)
        if speaking is not None and self._unannounced is None:
            self._publish(SpeakingChanged(speaking, False))

    def _take_next(self) -> tuple[bool, _Job | None]:
        """The job queued next (or the stop mark) if there is one, without waiting: the one looked ahead at first."""
        if self._ahead is not None:
            (after,), self._ahead = self._ahead, None
            return True, after
        try:
            return True, self._jobs.get_nowait()
        except queue.Empty:
            return False, None

    def _look_ahead(self) -> None:
        """Takes the job queued next, if any, and starts rendering its first chunk when Open JTalk says it: a line
        said sentence by sentence then has no silence between its sentences. Called before a last chunk plays."""
        if self._ahead is not None or (self._renderer is None and self._voicevox_renderer is None
                                       and self._kokoro_renderer is None):
            return
        try:
            after = self._jobs.get_nowait()
        except queue.Empty:
            return
        self._ahead = (after,)
        plan = None
        if after is not None and not after.future.done():
            plan = self._voicevox_plan(after.utterance, wait=False) or self._kokoro_plan(after.utterance, note=False) \
                or self._openjtalk_plan(after.utterance)
        if after is not None and plan is not None and plan.chunks:
            assert self._scratch is not None
            path = self._scratch / f"ahead-{id(after)}.wav"
            self._rendered_ahead = (after, plan, path, self._submit(plan, plan.chunks[0], path))

    def _submit(self, plan: _Plan, chunk: str, path: Path) -> concurrent.futures.Future[float]:
        """Renders ``chunk`` to ``path`` on the plan's engine's thread."""
        if plan.engine == "kokoro":
            assert self._kokoro_renderer is not None
            return self._kokoro_renderer.submit(self._render_kokoro, chunk, path, **plan.tuning)
        if plan.engine == "voicevox":
            if self._voicevox_renderer is None:  # two: a request an interruption abandoned never delays the next
                self._voicevox_renderer = concurrent.futures.ThreadPoolExecutor(
                    2, thread_name_prefix="speaker-voicevox")
            return self._voicevox_renderer.submit(self._render_voicevox, plan, chunk, path)
        assert self._renderer is not None
        assert self._openjtalk is not None
        return self._renderer.submit(self._openjtalk.write_wav, chunk, path, **plan.tuning)

    def _render_kokoro(self, chunk: str, path: Path, **tuning: Any) -> float:
        """On Kokoro's thread, after its load: raises :class:`KokoroUnavailable` when it did not load."""
        voice = self._kokoro
        if voice is None or not voice.loaded:
            raise KokoroUnavailable(self._kokoro_problem or "Kokoro is not available")
        seconds = voice.write_wav(chunk, path, **tuning)
        if self._notices.pop("kokoro", None) is not None and self._audio_problem is None:
            self._engines_status()  # downloaded since a line went to the default voice: the status says so no more
        return seconds

    def _kokoro_plan(self, utterance: Utterance, *, note: bool = True) -> _Plan | None:
        """How Kokoro says ``utterance``: None when its voice names none of Kokoro's, the line has no Japanese (the
        system voice says it, as for Mei), or Kokoro is not downloaded or failed to load (then, ``note``, the
        status says so once)."""
        spec = parse_voice_spec(utterance.voice)
        if not spec.names_kokoro or not contains_japanese(utterance.text):
            return None
        if not self._start_kokoro():
            if note:
                self._notice("kokoro", self._kokoro_problem or "Kokoro is not downloaded (Settings, Camera and voice: "
                                                               "download Kokoro's voices)")
            return None
        rate_factor, volume_factor, _ = EMOTION_PROSODY[utterance.emotion]
        base_rate = utterance.rate or round(self.rate * (spec.rate or DEFAULT_RATE) / DEFAULT_RATE)
        tuning = {"voice": spec.kokoro_voice or next(iter(JAPANESE_VOICES)),
                  "speed": round(base_rate * rate_factor) / DEFAULT_RATE,
                  "volume": max(0.0, min(1.0, self.volume * volume_factor))}
        return _Plan(first_clause(sentences(utterance.text, KOKORO_CHUNK_CHARS)), tuning, "kokoro")

    def _render_voicevox(self, plan: _Plan, chunk: str, path: Path) -> float:
        tuning = plan.tuning
        engine: VoicevoxEngine = tuning["engine"]
        rendered = engine.render(chunk, tuning["style"], path, speed=tuning["speed"], pitch=tuning["pitch"],
                                 volume=tuning["volume"])
        if self._notices.pop(engine.address, None) is not None and self._audio_problem is None:
            log.info("speech: %s at %s speaks again", engine.name, engine.base_url)
            self._engines_status()
        self._moras[path] = rendered.moras
        return rendered.duration_s

    def _voicevox_plan(self, utterance: Utterance, *, wait: bool = True) -> _Plan | None:
        """How a VOICEVOX-compatible engine says ``utterance``, or None when its voice names none, or none that
        answers (:meth:`_engine_for` then noted why), or the line has no Japanese (the default voice says it, as it
        says Open JTalk's). ``wait``: for the engines' search after the start."""
        spec = parse_voice_spec(utterance.voice)
        if not spec.names_voicevox or not contains_japanese(utterance.text):  # it reads English as katakana
            return None
        if wait:
            self._engines_known.wait(ENGINES_WAIT_S)
        elif not self._engines_known.is_set():
            return None
        chosen = self._engine_for(spec, note=wait)
        if chosen is None:
            return None
        engine, style = chosen
        rate_factor, volume_factor, _ = EMOTION_PROSODY[utterance.emotion]
        base_rate = utterance.rate or round(self.rate * (spec.rate or DEFAULT_RATE) / DEFAULT_RATE)
        half_tone = spec.half_tone + EMOTION_HALF_TONE[utterance.emotion]
        # AivisSpeech's own advice: its voice degrades away from pitchScale 0 (its styles carry the feeling).
        pitch = 0.0 if engine.name == "AivisSpeech" else half_tone * PITCH_SCALE_PER_SEMITONE
        tuning = {"engine": engine, "style": style, "speed": round(base_rate * rate_factor) / DEFAULT_RATE,
                  "pitch": pitch, "volume": max(0.0, min(1.0, self.volume * volume_factor))}
        return _Plan(sentences(utterance.text, VOICEVOX_CHUNK_CHARS), tuning, "voicevox")

    def _engine_for(self, spec: VoiceSpec, *, note: bool) -> tuple[VoicevoxEngine, int] | None:
        """The engine and style ``spec`` names among those found; None (and a notice, ``note``) when none."""
        style, address = spec.voicevox_style
        now = time.monotonic()
        candidates = [(engine, found) for engine, found in self._engines
                      if address is None or engine.address == address.lower()]
        usable = [(engine, found) for engine, found in candidates
                  if now - self._engine_failed.get(engine.address, -ENGINE_RETRY_S) >= ENGINE_RETRY_S]
        for engine, found in usable:
            if style is None:
                return engine, found.styles[0].id
            if any(s.id == style for s in found.styles):
                return engine, style
        if note and not (candidates and not usable):  # an engine that just failed: its own notice says why
            if usable:
                where = ", ".join(f"{e.name} at {e.base_url}" for e, _ in usable)
                problem = f"{where} has no voice {style}"
            elif address is not None:
                problem = f"no voice engine at {address} was found on this machine or given in the settings"
            else:
                problem = "no VOICEVOX-compatible engine answers (VOICEVOX, AivisSpeech, or an address in the " \
                          "settings)"
            self._notice("voicevox", problem)
        return None

    def _notice(self, key: str, problem: str) -> None:
        """Says once (log and status) why a VOICEVOX voice is not heard: its lines go to the default voice."""
        text = f"{problem}: its lines are said by the default voice"
        if self._notices.get(key) != text:
            self._notices[key] = text
            log.warning("speech: %s", text)
            if self._audio_problem is None:
                self._engines_status()

    def _openjtalk_plan(self, utterance: Utterance) -> _Plan | None:
        """How Open JTalk says ``utterance`` (its chunks and tuning), or None when it does not say it."""
        spec = parse_voice_spec(utterance.voice)
        if self._openjtalk is None or not self._says_openjtalk(spec, utterance.text):
            return None
        rate_factor, volume_factor, _ = EMOTION_PROSODY[utterance.emotion]
        base_rate = utterance.rate or round(self.rate * (spec.rate or DEFAULT_RATE) / DEFAULT_RATE)
        tuning = {"speed": round(base_rate * rate_factor) / DEFAULT_RATE,
                  "volume": max(0.0, min(1.0, self.volume * volume_factor)), "all_pass": spec.all_pass,
                  "half_tone": spec.half_tone + EMOTION_HALF_TONE[utterance.emotion]}
        # Sentence by sentence, the first cut after its first clause: the first audio waits for a clause, not the
        # line (a 67-letter line of three sentences: 82-105 ms against 587-669 ms in 80-letter chunks, same run).
        return _Plan(first_clause(sentences(utterance.text, OPENJTALK_CHUNK_CHARS)), tuning)

    def _says_openjtalk(self, spec: VoiceSpec, text: str) -> bool:
        """Open JTalk says a Japanese line unless a system voice is named (an id, or ``engine=system``)."""
        return contains_japanese(text) and not spec.names_system_voice and not spec.names_voicevox \
            and not spec.names_kokoro

    def _settle(self, engine: Any) -> None:
        """Waits for a chunk left rendering by an interruption, so that this job starts on an idle engine."""
        with self._wake:
            self._wake.wait_for(lambda: self._finished >= self._unfinished, timeout=FINISH_TIMEOUT_S)
        wait_idle(engine)

    def _say(self, engine: Any, job: _Job, instead: Utterance | None = None) -> SpeakResult:
        """Says ``job``'s utterance (or ``instead``: what is left of it, in the default voice)."""
        utterance = instead or job.utterance
        spec = parse_voice_spec(utterance.voice)
        plan = self._voicevox_plan(utterance) if spec.names_voicevox else None
        if spec.names_voicevox and plan is None:  # no engine answers for it: the default voice, said why once
            return self._say(engine, job, replace(utterance, voice=spec.without_engine()))
        if spec.names_kokoro:
            plan = self._kokoro_plan(utterance)
            if plan is None:  # not downloaded, failed, or a line in Latin letters: the default voice
                return self._say(engine, job, replace(utterance, voice=spec.without_engine()))
        rate_factor, volume_factor, pitch = EMOTION_PROSODY[utterance.emotion]
        base_rate = utterance.rate or round(self.rate * (spec.rate or DEFAULT_RATE) / DEFAULT_RATE)
        rate = round(base_rate * rate_factor)
        volume = max(0.0, min(1.0, self.volume * volume_factor))
        start: Callable[[str, Path], concurrent.futures.Future[float] | None]
        finish: Callable[[concurrent.futures.Future[float] | None], None]
        chunk_chars, ahead = MAX_CHUNK_CHARS, False
        first: tuple[Path, concurrent.futures.Future[float]] | None = None  # its first chunk, rendered ahead
        if plan is None and self._renderer is not None:
            plan = self._openjtalk_plan(utterance)
        if plan is not None:
            said = plan
            voice_id, text = plan.voice_id, utterance.text
            # each chunk renders while the one before it plays
            chunk_chars, ahead = OPENJTALK_CHUNK_CHARS if plan.engine == "openjtalk" else VOICEVOX_CHUNK_CHARS, True
            rendered_ahead, self._rendered_ahead = self._rendered_ahead, None
            if rendered_ahead is not None and rendered_ahead[0] is job and rendered_ahead[1] == plan:
                first = rendered_ahead[2], rendered_ahead[3]

            def start(chunk: str, path: Path) -> concurrent.futures.Future[float] | None:
                return self._submit(said, chunk, path)

            def finish(pending: concurrent.futures.Future[float] | None) -> None:
                assert pending is not None
                self._await_render(pending, job)
        elif engine is None:
            reason = self._system_problem or "no speech engine"
            return SpeakResult(success=True, skipped=True, reason=reason)
        else:
            self._settle(engine)
            asked = Utterance(utterance.text, utterance.emotion, spec.system_voice, utterance.speaker_id, rate)
            voice_id, japanese = choose_voice(self._system_voices, asked, espeak=self.espeak)
            text = to_kana(utterance.text) if japanese else utterance.text
            engine.setProperty("voice", voice_id)
            engine.setProperty("rate", rate)
            engine.setProperty("volume", volume)
            shifted = round(pitch + spec.half_tone / SEMITONES_PER_ESPEAK_PITCH)
            with contextlib.suppress(KeyError, ValueError):  # SAPI5 / NSSS have no pitch property
                engine.setProperty("pitch", max(0, min(99, shifted)))

            def start(chunk: str, path: Path) -> concurrent.futures.Future[float] | None:
                self._render(engine, chunk, path, job)  # on this thread, the engine's owner: done when it returns
                return None

            def finish(pending: concurrent.futures.Future[float] | None) -> None:
                pass
        self._count += 1
        assert self._scratch is not None
        out_path = None
        if self._output_dir is not None:
            speaker = re.sub(r"[^A-Za-z0-9_-]+", "_", utterance.speaker_id) or "speech"
            out_path = self._output_dir / f"{self._count:04d}-{speaker}.wav"
        frames = 0
        framerate = 0
        writer: wave.Wave_write | None = None
        wav_path = None if out_path is None else str(out_path)

        def result(**fields: Any) -> SpeakResult:
            return SpeakResult(voice=voice_id, spoken_text=text, wav_path=wav_path, **fields)

        try:
            chunks = plan.chunks if plan is not None else split_for_speech(text, chunk_chars)
            paths = [self._scratch / f"{self._count}-{index}.wav" for index in range(len(chunks))]
            pending = None
            if first is not None:
                paths[0], pending = first
            elif chunks and ahead:
                pending = start(chunks[0], paths[0])
            for index, chunk_path in enumerate(paths):
                if job.future.cancelled():  # the caller gave up waiting (its turn was cancelled): stop here
                    raise _Interrupted
                try:
                    finish(pending if ahead else start(chunks[index], chunk_path))
                except (VoicevoxProblem, KokoroUnavailable) as problem:
                    raise _EngineFailed(index, problem) from None
                with wave.open(str(chunk_path), "rb") as rendered:
                    params = rendered.getparams()
                    data = rendered.readframes(params.nframes)
                if out_path is not None:
                    if writer is None:
                        private_file(out_path)  # what a companion said is the user's to hear: 0600
                        writer = wave.open(str(out_path), "wb")  # noqa: SIM115 - closed in finally
                        writer.setparams(params)
                    writer.writeframes(data)
                frames += params.nframes
                framerate = params.framerate
                if ahead and index + 1 < len(chunks):  # the next chunk renders while this one plays
                    pending = start(chunks[index + 1], paths[index + 1])
                elif ahead:
                    self._look_ahead()  # and the next line's first chunk while this line's last one plays
                self._announce()  # the highlight of a line for an engine comes on with its audio
                moras = self._moras.pop(chunk_path, ())
                if moras:
                    self._publish(MorasSpoken(utterance.speaker_id, chunks[index], time.monotonic(), moras))
                if self._player is not None and params.nframes:  # a chunk of symbols alone may say nothing
                    self._play(chunk_path, job)
                chunk_path.unlink(missing_ok=True)
        except _EngineFailed as failed:  # the engine is gone or answers wrongly: the rest in the default voice
            assert plan is not None
            if plan.engine == "kokoro":
                self._kokoro_problem = str(failed.problem)
                self._notice("kokoro", str(failed.problem))
            else:
                address = plan.tuning["engine"].address
                self._engine_failed[address] = time.monotonic()
                self._notice(address, str(failed.problem))  # it says which engine, where, and what went wrong
            if writer is not None:
                writer.close()
                writer = None
            rest = replace(utterance, text=" ".join(chunks[failed.index:]), voice=spec.without_engine())
            later = self._say(engine, job, rest)
            return later.model_copy(update={"duration_s": later.duration_s + (frames / framerate if framerate
                                                                              else 0.0)})
        except _Interrupted:
            return result(success=False, interrupted=True, reason="interrupted",
                          duration_s=frames / framerate if framerate else 0.0)
        except AudioDeviceError as err:
            reason = f"no audio device: {err}"
            self._report_audio_problem(reason)
            return result(success=True, skipped=True, reason=reason)
        finally:
            if writer is not None:
                writer.close()
        return result(success=True, duration_s=frames / framerate if framerate else 0.0)

    def _await_render(self, pending: concurrent.futures.Future[float], job: _Job) -> None:
        """Waits for Open JTalk's chunk; raises :class:`_Interrupted` as soon as an interrupt comes (the chunk is
        left to finish on the renderer's thread, unused)."""
        while True:
            try:
                pending.result(timeout=RENDER_POLL_S)
                break
            except concurrent.futures.TimeoutError:
                if self._abandoned(job):
                    raise _Interrupted from None
        if self._abandoned(job):
            raise _Interrupted

    def _render(self, engine: Any, text: str, path: Path, job: _Job) -> None:
        """Renders ``text`` to ``path``; raises :class:`_Interrupted` as soon as an interrupt comes."""
        wait_idle(engine)  # property changes are queued inside espeak: let them land before runAndWait's stop()
        with self._wake:
            target = self._finished + 1
        engine.save_to_file(text, str(path))
        engine.runAndWait()
        deadline = time.monotonic() + FINISH_TIMEOUT_S
        with self._wake:
            while self._finished < target:
                if self._abandoned(job):
                    # Answer now; the engine finishes this chunk (one sentence) before the next job uses it.
                    self._unfinished = target
                    raise _Interrupted
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"the speech engine did not finish within {FINISH_TIMEOUT_S:g} s")
                self._wake.wait(remaining)
        # espeak notifies "finished" while its synthesis thread is still winding down; the next runAndWait would
        # then cancel (espeak_Cancel) the queued property changes of the next utterance, which would be spoken at
        # this one's rate. So wait until the engine is idle.
        wait_idle(engine)
        if self._abandoned(job):
            raise _Interrupted

    def _abandoned(self, job: _Job) -> bool:
        """Interrupted, or its caller stopped waiting (a cancelled speak query)."""
        return self._generation != job.generation or job.future.cancelled()

    def _announce(self) -> None:
        """Publishes the ``SpeakingChanged`` that waited for the audio (a line for a VOICEVOX engine)."""
        speaking, self._unannounced = self._unannounced, None
        if speaking is not None:
            self._publish(SpeakingChanged(speaking, True))

    def _play(self, path: Path, job: _Job) -> None:
        assert self._player is not None
        for listener in self.playback_listeners:  # voice input's echo guard: what is played, when
            listener(path)
        try:
            if self._abandoned(job) or not self._player.play(path, abandoned=lambda: self._abandoned(job)) \
                    or self._abandoned(job):
                raise _Interrupted
        finally:
            for listener in self.playback_listeners:
                listener(None)

    def _on_finished(self, name: str | None = None, completed: bool = True) -> None:
        """Called by the engine (possibly on espeak's own thread)."""
        if completed:
            with self._wake:
                self._finished += 1
                self._wake.notify_all()

    def _report_audio_problem(self, reason: str) -> None:
        if self._audio_problem is None:
            log.warning("speech is off: %s", reason)
        self._audio_problem = reason
        self._set_status(DeviceStatus("speaker", False, reason))

    def _set_status(self, status: DeviceStatus) -> None:
        if status == self._status:
            return
        self._status = status
        self._publish(status)

    def _publish(self, event: DeviceStatus | SpeakingChanged | MorasSpoken) -> None:
        """From any thread: hands ``event`` to the bus on the loop (the bus may not be bound to it yet)."""
        loop = self._loop
        if self._bus is None or loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(self._bus.publish, event)


def sentences(text: str, max_chars: int) -> list[str]:
    """``text``'s sentences, each its own chunk (a long one cut at a comma or a space): an engine's first audio
    waits for the first sentence only, and the next is synthesised while it plays."""
    return [chunk for sentence in _SENTENCE_END.split(text) if sentence.strip()
            for chunk in split_for_speech(sentence, max_chars)]


def first_clause(chunks: list[str], longer_than: int = KOKORO_FIRST_CHARS) -> list[str]:
    """``chunks`` with the first cut after its first comma when it is longer than ``longer_than`` characters and
    the comma leaves a few characters on each side: an engine that renders a chunk whole is heard after a clause."""
    if not chunks or len(chunks[0]) <= longer_than:
        return chunks
    head, *tail = _COMMA.split(chunks[0], maxsplit=1)
    if not tail or len(head) < 3 or len(tail[0].strip()) < 3:
        return chunks
    return [head, tail[0].strip(), *chunks[1:]]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (blocked)
        return False


def _resolve(job: _Job, result: SpeakResult) -> None:
    if not job.future.done():
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled by the caller in between
            job.future.set_result(result)


def build_speaker(bus: Bus | None, *, rate: int = 170, volume: float = 1.0, enabled: bool = True,
                  output_dir: Path | None = None, engine_urls: Sequence[str] = (),
                  find_local_engines: bool = False, data_dir: Path | None = None) -> Pyttsx3Speaker:
    """The speaker for the voice settings; ``enabled=False`` never starts the engine (speech skipped, said once).
    ``engine_urls`` and ``find_local_engines``: the VOICEVOX-compatible engines it looks for after the start;
    ``data_dir``: where Kokoro's downloaded files are looked for."""
    speaker = Pyttsx3Speaker(bus, rate=rate, volume=volume, output_dir=output_dir, engine_urls=engine_urls,
                             find_local_engines=find_local_engines, data_dir=data_dir)
    speaker.enabled = enabled
    return speaker
