"""A conversation's title in the list ends at a word ("... tonight…"), never mid-word ("... tonight. Wan"); a
Japanese one ends at a character with "…". The store keeps the first 40 characters of the first message."""

from __future__ import annotations

import time

from app.storage.database import ConversationInfo
from ui.chat.conversation_model import ConversationsModel, shown_title

CUT = "Good evening, we could talk tonight. Want to tell me about yourselves?"[:40]


def test_an_english_title_cut_by_the_store_ends_at_a_word_with_an_ellipsis() -> None:
    assert CUT.endswith("tonight. Wan")
    assert shown_title(CUT) == "Good evening, we could talk tonight…"


def test_a_japanese_title_ends_at_a_character_with_an_ellipsis() -> None:
    cut = ("こんばんは、はじめまして！今夜は何を話そうか。"
           "みんなのこと教えてね。好きな食べ物とか趣味とか、なんでもいいよ")[:40]
    assert shown_title(cut) == cut + "…"


def test_a_short_title_is_shown_whole() -> None:
    assert shown_title("Good evening!") == "Good evening!"


def test_the_list_row_shows_the_title_so() -> None:
    model = ConversationsModel()
    info = ConversationInfo(id=1, title=CUT, created_at=time.time(), updated_at=time.time(), message_count=1)
    assert model.label(info).splitlines()[0] == "Good evening, we could talk tonight…"
