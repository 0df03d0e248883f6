"""What a newcomer reads in the Japanese window in its first minutes is Japanese: the end of a conversation whose
companions had no model to answer, their stand-in votes, the search panel's reading of an English question, the
message refused for want of a model. Each was an English sentence left in the Japanese interface."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from companions.companion.companion import NO_USABLE_VOTE
from companions.companion.filler import FILLER_REASONS
from companions.conversation.readmodel import ConversationView, VoteView
from companions.search.classify.query_classifier import RuleBasedClassifier
from ui.chat.texts import chat_text
from ui.search.wording import classification_texts
from ui.turns.wording import TurnsWording
from ui.window.i18n import use_language

ENGLISH_WORDS = re.compile(r"[A-Za-z]{3,}(?:\s+[A-Za-z]{2,}){2,}")  # three English words in a row: a sentence


@pytest.fixture
def japanese() -> Iterator[None]:
    use_language("ja")
    yield
    use_language("en")


def _no_english(text: str) -> None:
    assert text
    found = ENGLISH_WORDS.search(text)
    assert found is None, f"English in the Japanese window: {found.group()!r} in {text!r}"


def test_a_conversation_nobody_could_answer_ends_in_japanese(japanese: None) -> None:
    wording = TurnsWording(lambda who: who or "")
    view = ConversationView(status="ended", ended_reason="failed", ended_detail="no candidate could say anything")
    _no_english(wording.ended(view))
    _no_english(wording.ended(ConversationView(status="ended", ended_reason="failed",
                                               ended_detail="internal error: KeyError: 'x'")))
    _no_english(wording.ended(ConversationView(  # the backend's English reason is the tooltip, not the words
        status="ended", ended_reason="model-failed",
        ended_detail="cannot reach http://127.0.0.1:8080/v1 (ConnectError: All connection attempts failed)")))


def test_a_stand_in_vote_s_reason_is_japanese(japanese: None) -> None:
    wording = TurnsWording(lambda who: who or "")
    vote = VoteView(companion="akari", status="voted", state="listen", importance=0, reason=NO_USABLE_VOTE.reason)
    cells, _ = wording.vote_cells(vote, muted=False)
    _no_english(cells[-1])


async def test_an_english_question_s_intent_is_said_in_japanese(japanese: None) -> None:
    classification = await RuleBasedClassifier().classify("What is TypeScript?")
    _no_english(classification_texts(classification, None, "ja")["intent"])


def test_a_message_sent_before_a_model_is_there_is_refused_in_japanese(japanese: None) -> None:
    _no_english(chat_text("send_failed", error=chat_text("no_model")))


@pytest.mark.parametrize("reason", FILLER_REASONS)
def test_every_stand_in_reason_is_said_in_japanese(japanese: None, reason: str) -> None:
    """A stand-in line's bubble names why it stands in; a reason without words raised KeyError when shown."""
    _no_english(chat_text(f"filler.{reason}"))
