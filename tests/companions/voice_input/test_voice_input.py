"""Voice input in the core: when the user speaks (pre-roll, silence, sensitivity), the echo guard, and the
controller (barge-in, partial and final words, sending or leaving them, push-to-talk, the switch) with doubles
behind its ports: a microphone the test feeds, a level-based voice detector, a recognizer with a script."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable

import numpy as np
import pytest

from companions.devices.ports import SpeakingChanged
from companions.voice_input.audio import FRAME_S, FRAME_SAMPLES, AudioFrame, MicrophoneUnavailable
from companions.voice_input.detection import Began, DetectionSettings, Ended, SpeechDetector
from companions.voice_input.echo import EchoGuard
from companions.voice_input.events import MicrophoneChanged, SpeechHeard, SpeechNotUnderstood
from companions.voice_input.listening import ListeningSettings, VoiceInput
from companions.voice_input.recognition import Certainty, RecognitionSession, Recognized
from companions.wire.bus import BusItem, InProcessBus


def tone(level_dbfs: float, *, seed: int = 0) -> bytes:
    """A 20 ms voiced frame: a 220 Hz tone with harmonics at about ``level_dbfs``."""
    t = np.arange(FRAME_SAMPLES) / 16_000 + seed * FRAME_S
    wave = np.sin(2 * np.pi * 220 * t) + 0.5 * np.sin(2 * np.pi * 440 * t) + 0.25 * np.sin(2 * np.pi * 660 * t)
    wave *= 10 ** (level_dbfs / 20) * math.sqrt(2) / np.sqrt(np.mean(wave**2) * 2)
    return (wave * 32767).astype("<i2").tobytes()


SILENCE = bytes(FRAME_SAMPLES * 2)


def frames(pattern: str, start: float = 100.0, level: float = -20.0) -> list[AudioFrame]:
    """'.' a silent frame, 'x' a voiced one, 'q' a quiet voiced one (-50 dBFS), 20 ms each from ``start``."""
    out = []
    for i, c in enumerate(pattern):
        pcm = SILENCE if c == "." else tone(-50.0 if c == "q" else level, seed=i)
        out.append(AudioFrame(pcm, start + i * FRAME_S))
    return out


# -- detection ---------------------------------------------------------------------------------------------------

def run(detector: SpeechDetector, stream: list[AudioFrame], voiced: Callable[[AudioFrame], bool] | None = None) \
        -> list[Began | AudioFrame | Ended]:
    out = []
    for frame in stream:
        outcome = detector.frame(frame, voiced(frame) if voiced else frame.pcm != SILENCE)
        if outcome is not None:
            out.append(outcome)
    return out


def test_an_utterance_starts_with_the_pre_roll_before_the_first_voiced_frame() -> None:
    detector = SpeechDetector(DetectionSettings(pre_roll_s=0.3, sensitivity=0.5))
    stream = frames("." * 50 + "x" * 20)
    began = next(o for o in run(detector, stream) if isinstance(o, Began))
    onset = stream[50].at
    assert began.onset == pytest.approx(onset)
    assert began.frames[0].at == pytest.approx(onset - 0.3)  # the 300 ms before the first syllable are kept
    assert began.frames[-1].at > onset  # and every frame up to the trigger


@pytest.mark.parametrize("silence_s", [0.3, 1.2])
def test_the_end_of_speech_silence_is_the_one_set(silence_s: float) -> None:
    detector = SpeechDetector(DetectionSettings(end_silence_s=silence_s))
    stream = frames("x" * 30 + "." * 100)
    outcomes = run(detector, stream)
    ended = [o for o in outcomes if isinstance(o, Ended)]
    assert len(ended) == 1
    assert ended[0].speech_end == pytest.approx(stream[29].end)
    forwarded = [o for o in outcomes if isinstance(o, AudioFrame)]
    # ended once the silence after the last voiced frame lasted the setting, not before, not much after
    assert forwarded[-1].end - stream[29].end == pytest.approx(silence_s - FRAME_S, abs=FRAME_S)


def test_sensitivity_decides_whether_a_short_sound_starts_an_utterance() -> None:
    blip = frames("." * 20 + "xxx" + "." * 20)  # 60 ms: a cough, a click
    assert not any(isinstance(o, Began) for o in run(SpeechDetector(DetectionSettings(sensitivity=0.0)), blip))
    assert any(isinstance(o, Began) for o in run(SpeechDetector(DetectionSettings(sensitivity=1.0)), blip))


# -- echo guard --------------------------------------------------------------------------------------------------

def syllables(i: int) -> float:
    """A voice's level rises and falls with its syllables (dBFS, frame ``i``)."""
    return -18.0 + 8.0 * math.sin(i / 2.5)


def test_the_guard_takes_the_companions_voice_for_echo_and_the_user_over_it_for_the_user() -> None:
    guard = EchoGuard("guard")
    played = b"".join(tone(syllables(i), seed=i) for i in range(150))
    guard.play(played, at=10.0)
    # what comes back: 12 dB down, 40 ms (two frames) late
    echo = [AudioFrame(tone(syllables(i - 2) - 12.0, seed=i), 10.0 + i * FRAME_S) for i in range(2, 110)]
    assert not any(guard.allows(f) for f in echo)  # never the user's, however long it plays
    assert guard.learned
    assert guard.delay_s == pytest.approx(0.04)  # the echo path's delay, found in what was heard
    assert guard.coupling_db == pytest.approx(-12.0, abs=1.5)
    loud_user = AudioFrame(tone(-10.0, seed=120), 10.0 + 120 * FRAME_S)  # the user, over the companions
    assert guard.allows(loud_user)
    after = AudioFrame(tone(-24.0, seed=1), 10.0 + 150 * FRAME_S + 0.5)  # once the echo has died away
    assert guard.allows(after)


def test_pausing_ignores_everything_while_they_speak_and_a_cut_off_line_stops_counting() -> None:
    guard = EchoGuard("pause")
    guard.play(b"".join(tone(-12.0) for _ in range(100)), at=10.0)
    assert not guard.allows(AudioFrame(tone(0.0), 10.5))
    guard.stopped(at=11.0)
    assert guard.allows(AudioFrame(tone(0.0), 11.5))


def test_a_headset_is_advised_when_the_echo_is_as_loud_as_what_is_played() -> None:
    guard = EchoGuard("guard")
    guard.play(b"".join(tone(-12.0, seed=i) for i in range(100)), at=10.0)
    for i in range(40):
        guard.allows(AudioFrame(tone(-12.5, seed=i), 10.0 + i * FRAME_S))
    assert guard.headset_advised


# -- the controller ------------------------------------------------------------------------------------------------

class FedMicrophone:
    """The test hands frames to the controller as a device's thread would."""

    def __init__(self, fail: str = "") -> None:
        self.deliver: Callable[[AudioFrame], None] | None = None
        self.fail = fail
        self.opened = 0

    @property
    def source(self) -> str:
        return "test microphone"

    async def open(self, deliver: Callable[[AudioFrame], None]) -> None:
        if self.fail:
            raise MicrophoneUnavailable(self.fail)
        self.deliver = deliver
        self.opened += 1

    async def close(self) -> None:
        self.deliver = None

    def push(self, stream: Iterable[AudioFrame]) -> None:
        for frame in stream:
            if self.deliver is not None:
                self.deliver(frame)


class LevelActivity:
    """Voice where there is sound: what a detector says of a tone (the level floor is the controller's)."""

    def __init__(self) -> None:
        self.mode = -1

    def set_mode(self, mode: int) -> None:
        self.mode = mode

    def is_speech(self, pcm: bytes) -> bool:
        return pcm != SILENCE


class ScriptedSession:
    def __init__(self, words: list[str], certainty: Certainty = "sure") -> None:
        self.words = words
        self.certainty = certainty
        self.frames = 0
        self.heard: list[str] = []  # what came, in order: "x" a voiced frame, "." a silent one, "|" a pause

    def accept(self, pcm: bytes) -> None:
        self.frames += 1
        self.heard.append("." if pcm == SILENCE else "x")

    def pause(self) -> None:
        self.heard.append("|")

    def partial(self) -> str:
        return " ".join(self.words[: max(1, self.frames // 10)])

    def finish(self) -> Recognized:
        return Recognized(" ".join(self.words), self.certainty)


class ScriptedRecognizer:
    """Says the next scripted text for each utterance; the test fails if the script is not used up."""

    name = "scripted"
    languages = ("en",)
    streaming = False  # told of pauses, as Whisper is

    def __init__(self, *texts: str, certainty: Certainty = "sure") -> None:
        self.script = [t.split() for t in texts]
        self.certainty = certainty
        self.sessions: list[ScriptedSession] = []
        self.words: set[str] = set()

    def prepare(self) -> None:
        pass

    def use_words(self, words: Iterable[str]) -> None:
        self.words |= set(words)

    def begin(self) -> RecognitionSession:
        if not self.script:
            raise AssertionError("an utterance the script did not expect")
        session = ScriptedSession(self.script.pop(0), self.certainty)
        self.sessions.append(session)
        return session

    def close(self) -> None:
        pass


class Recorder:
    def __init__(self, bus: InProcessBus) -> None:
        self.items: list[BusItem] = []
        self.changed = asyncio.Event()
        bus.subscribe("events", self._on, name="recorder", direct=True)

    def _on(self, item: BusItem) -> None:
        self.items.append(item)
        self.changed.set()

    def of(self, kind: type) -> list:  # type: ignore[type-arg]
        return [i for i in self.items if isinstance(i, kind)]

    async def until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


async def test_speaking_interrupts_the_companions_shows_partial_words_and_sends_the_final_ones(
        bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("hello akari how are you")
    interrupts: list[float] = []
    sent: list[str] = []
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, detection=DetectionSettings(end_silence_s=0.3)),
                       send=lambda text: (sent.append(text), "m-1")[1], interrupt=lambda: interrupts.append(1.0),
                       words=lambda: ["akari", "hina"])
    await voice.start()
    try:
        assert voice.state == "listening"
        assert recognizer.words == {"akari", "hina"}
        stream = frames("." * 10 + "x" * 60 + "." * 30)
        microphone.push(stream[:70])  # the user is still speaking: words show as they come
        await recorder.until(lambda: any(not h.final and h.text for h in recorder.of(SpeechHeard)))
        microphone.push(stream[70:])
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    assert interrupts == [1.0]  # the user's voice cut the companions off, once
    heard = recorder.of(SpeechHeard)
    final = heard[-1]
    assert (final.text, final.final, final.sent, final.message_id) == ("hello akari how are you", True, True, "m-1")
    assert sent == ["hello akari how are you"]
    states = [c.state for c in recorder.of(MicrophoneChanged)]
    assert states[:5] == ["off", "listening", "hearing", "recognising", "listening"]
    assert not recognizer.script


async def test_words_wait_in_the_box_when_the_settings_say_so(bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("good morning")
    sent: list[str] = []
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, send_at_end=False,
                                         detection=DetectionSettings(end_silence_s=0.3)),
                       send=lambda text: (sent.append(text), "m")[1])
    await voice.start()
    try:
        microphone.push(frames("." * 5 + "x" * 30 + "." * 30))
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    final = recorder.of(SpeechHeard)[-1]
    assert (final.text, final.sent) == ("good morning", False)
    assert sent == []


async def test_words_the_recognizer_is_unsure_of_wait_in_the_box(bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("good morning", certainty="unsure")
    sent: list[str] = []
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, detection=DetectionSettings(end_silence_s=0.3)),
                       send=lambda text: (sent.append(text), "m")[1])
    await voice.start()
    try:
        microphone.push(frames("." * 5 + "x" * 30 + "." * 30))
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    final = recorder.of(SpeechHeard)[-1]
    assert (final.text, final.sent, final.unsure) == ("good morning", False, True)
    assert sent == []


async def test_words_made_of_a_language_the_recognizer_does_not_speak_are_neither_shown_nor_sent(
        bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("also the old old os", certainty="foreign")
    sent: list[str] = []
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, detection=DetectionSettings(end_silence_s=0.3)),
                       send=lambda text: (sent.append(text), "m")[1])
    await voice.start()
    try:
        stream = frames("." * 10 + "x" * 60 + "." * 30)
        microphone.push(stream[:70])
        await recorder.until(lambda: any(not h.final and h.text for h in recorder.of(SpeechHeard)))
        microphone.push(stream[70:])
        await recorder.until(lambda: bool(recorder.of(SpeechNotUnderstood)))
    finally:
        await voice.stop()
    assert recorder.of(SpeechNotUnderstood)[0].languages == ("en",)
    assert sent == []
    assert [h.text for h in recorder.of(SpeechHeard) if h.final] == [""]  # the partial words shown went away


async def test_quiet_speech_is_heard_only_at_a_high_sensitivity(bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("quiet words")
    low = ListeningSettings(on=True, detection=DetectionSettings(sensitivity=0.0, end_silence_s=0.3))
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer, low, send=lambda text: "m")
    await voice.start()
    try:
        microphone.push(frames("." * 5 + "q" * 40 + "." * 30, start=100.0))  # -50 dBFS: below the floor at 0
        await asyncio.sleep(0)  # the frames hop onto the loop
        assert voice.state == "listening"
        assert not voice.barge_ins
        await voice.configure(ListeningSettings(on=True, detection=DetectionSettings(sensitivity=1.0,
                                                                                     end_silence_s=0.3)))
        microphone.push(frames("." * 5 + "q" * 40 + "." * 30, start=200.0))
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    assert recorder.of(SpeechHeard)[-1].text == "quiet words"


async def test_push_to_talk_hears_from_the_press_with_its_pre_roll_to_the_release(bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("push to talk")
    interrupts: list[int] = []
    clock = [0.0]
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, mode="push-to-talk"), send=lambda text: "m",
                       interrupt=lambda: interrupts.append(1), clock=lambda: clock[0])
    await voice.start()
    try:
        microphone.push(frames("x" * 50))  # speech with the key up: not heard in push-to-talk
        await asyncio.sleep(0)
        assert not recognizer.sessions
        clock[0] = 101.0
        voice.press()
        assert interrupts == [1]
        assert voice.state == "hearing"
        microphone.push(frames("x" * 20, start=101.0))
        await asyncio.sleep(0)
        clock[0] = 101.4
        voice.release()
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    assert recorder.of(SpeechHeard)[-1].text == "push to talk"
    assert recognizer.sessions[0].frames >= 20 + 20  # the pre-roll before the press came with it


async def test_the_switch_closes_the_microphone_and_no_microphone_is_a_state_not_an_error(
        bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone = FedMicrophone()
    voice = VoiceInput(bus, microphone, LevelActivity(), ScriptedRecognizer(), ListeningSettings(on=True))
    await voice.start()
    await voice.switch(False)
    assert voice.state == "off"
    assert microphone.deliver is None
    microphone.push(frames("x" * 40))  # nothing is heard while it is off
    await voice.stop()
    missing = VoiceInput(bus, FedMicrophone(fail="no microphone: no audio input device was found"),
                         LevelActivity(), ScriptedRecognizer(), ListeningSettings(on=True))
    await missing.start()
    assert (missing.state, missing.reason) == ("unavailable", "no microphone: no audio input device was found")
    await missing.stop()
    assert recorder.of(MicrophoneChanged)[-1].state == "unavailable"


async def test_in_pause_mode_nothing_counts_while_a_companion_speaks(bus: InProcessBus) -> None:
    microphone = FedMicrophone()
    voice = VoiceInput(bus, microphone, LevelActivity(), ScriptedRecognizer(),
                       ListeningSettings(on=True, echo="pause"), send=lambda text: "m")
    await voice.start()
    try:
        bus.publish(SpeakingChanged("akari", True))  # a voice the app did not play itself (a bridge client's)
        microphone.push(frames("x" * 60))
        await asyncio.sleep(0)
        assert not voice.barge_ins
    finally:
        await voice.stop()


async def test_a_pause_is_recognized_while_the_silence_runs_and_speaking_on_loses_nothing(bus: InProcessBus) -> None:
    recorder = Recorder(bus)
    microphone, recognizer = FedMicrophone(), ScriptedRecognizer("one two three")
    voice = VoiceInput(bus, microphone, LevelActivity(), recognizer,
                       ListeningSettings(on=True, detection=DetectionSettings(end_silence_s=0.5, pre_roll_s=0.0)),
                       send=lambda text: "m-1")
    await voice.start()
    try:
        microphone.push(frames("." * 10 + "x" * 30 + "." * 15 + "x" * 20 + "." * 40))
        await recorder.until(lambda: any(h.final for h in recorder.of(SpeechHeard)))
    finally:
        await voice.stop()
    heard = "".join(recognizer.sessions[0].heard)
    # told at 200 ms of silence; the 100 ms after it come once the user speaks on, in order; at the end the
    # silence after the pause is never recognized: the pause's decoding is the final one
    assert heard.lstrip("x") == "." * 10 + "|" + "." * 5 + "x" * 20 + "." * 10 + "|", heard
    assert recorder.of(SpeechHeard)[-1].text == "one two three"
