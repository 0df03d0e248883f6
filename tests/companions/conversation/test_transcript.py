"""The chat's transcript (companions/conversation/transcript.py), without Qt: one bubble per line, what composing
shows, what is never shown, who is speaking which line, and a fresh start on a conversation switch."""

from __future__ import annotations

from companions.companion.worker import TextStreamed, TurnEnded
from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView
from companions.conversation.transcript import (
    ComposingDropped,
    ComposingShown,
    ComposingText,
    LineShown,
    SpeakingShown,
    Transcript,
    composing_key,
)
from companions.devices.ports import SpeakingChanged
from companions.wire.protocol import Message

TURN = "m1"
KEY = composing_key("akari", TURN)


def phase(revision: int, phase: str, speaker: str | None = "akari", turn: str = TURN) -> ConversationChanged:
    return ConversationChanged(ConversationView(revision, "running", TurnView(turn, "user", 1, phase,  # type: ignore[arg-type]
                                                                             speaker=speaker)), phase)


def test_a_composed_line_grows_then_the_message_takes_its_place_once() -> None:
    transcript = Transcript(lambda: "user")
    assert transcript.apply(phase(1, "composing")) == [ComposingShown(KEY, "akari", "composing", new=True)]
    assert transcript.apply(TextStreamed("akari", TURN, "Let me think")) == [ComposingText(KEY, "Let me think", False)]
    # The line of a speak call replaces the plain text (never said), then grows.
    assert transcript.apply(TextStreamed("akari", TURN, "Hello", kind="speech")) == [ComposingText(KEY, "Hello", True)]
    assert transcript.apply(TextStreamed("akari", TURN, " there.", kind="speech")) == [
        ComposingText(KEY, " there.", False)]
    assert transcript.apply(TextStreamed("akari", TURN, "(plain text after the line)")) == []
    assert transcript.apply(TurnEnded("akari", TURN, "finished")) == [
        ComposingShown(KEY, "akari", "waiting", new=False)]  # conversation control delivers it
    line = Message.create(from_="akari", message="Hello there.")
    shown = transcript.apply(line)
    assert shown == [LineShown(line, "Hello there.", None, replaced=(KEY,))]
    assert transcript.apply(line) == []  # once
    assert transcript.apply(TextStreamed("akari", TURN, "more")) == []  # said already: never shown
    assert list(transcript.shown) == [line.params.id]
    assert transcript.composing == {}


def test_a_second_request_of_a_turn_starts_a_paragraph_and_text_never_said_goes() -> None:
    transcript = Transcript(lambda: "user")
    transcript.apply(TextStreamed("hina", "m2", "First try."))
    transcript.apply(TextStreamed("hina", "m2", "", done=True))
    hina = composing_key("hina", "m2")
    assert transcript.apply(TextStreamed("hina", "m2", "Second.")) == [ComposingText(hina, "\nSecond.", False)]
    assert transcript.apply(phase(2, "composing", speaker="souta", turn="m2")) == [
        ComposingDropped(hina), ComposingShown(composing_key("souta", "m2"), "souta", "composing", new=True)]
    assert transcript.apply(phase(3, "cancelled", speaker="souta", turn="m2")) == [
        ComposingDropped(composing_key("souta", "m2"))]
    transcript.apply(TextStreamed("akari", "m3", "x"))
    assert transcript.apply(TurnEnded("akari", "m3", "failed")) == [ComposingDropped(composing_key("akari", "m3"))]


def test_the_latest_line_not_yet_voiced_is_the_one_spoken_and_stored_lines_never_are() -> None:
    transcript = Transcript(lambda: "user")
    old = Message.create(from_="akari", message="Yesterday's line.")
    assert transcript.stored(old) is not None
    assert transcript.apply(SpeakingChanged("akari", True)) == []  # said long ago
    mine = Message.create(from_="user", message="Hi!")
    line = Message.create(from_="akari", message="Hi, you!")
    transcript.apply(mine)
    transcript.apply(line)
    assert transcript.apply(SpeakingChanged("user", True)) == []
    assert transcript.apply(SpeakingChanged("akari", True)) == [SpeakingShown(line.params.id, "akari", True)]
    assert transcript.speaking == {"akari": line.params.id}
    assert transcript.apply(SpeakingChanged("akari", False)) == [SpeakingShown(line.params.id, "akari", False)]
    transcript.reset()  # the user opened another conversation
    assert (transcript.shown, transcript.speaking, transcript.composing) == ({}, {}, {})
    assert transcript.apply(line) != []  # shown again in the conversation opened
