"""A line asked for in one language comes back in it on the real 0.5B model, even when the words before it were in
the other one (companions/llm/script_grammar.py: the server is given the grammar of the line's script)."""

from __future__ import annotations

import pytest

from companions.companion.lines import detect_language
from companions.llm.openai_backend import OpenAIChatModel
from companions.llm.types import ChatMessage, ChatRequest, complete
from tests.realmodel.conftest import RealServer

pytestmark = pytest.mark.realmodel

AKARI_JA = ("あなたは「あかり」です。明るく好奇心旺盛な女の子。ユーザーと、ひな・そうたと一緒に話しています。"
            "自分のセリフだけを日本語で言う。1〜2文、90文字以内。")
AKARI_EN = "You are Akari, a cheerful curious girl talking with the user, Hina and Souta. Say only your own line."
TURNS = [
    ("ja", AKARI_JA, "Hello! How are you doing?"),
    ("ja", AKARI_JA, "user: Hello everyone, how are you today?\nhina: I see. Would you like a cup of something warm?"
                     "\nuser: What is your favorite tea?"),
    ("en", AKARI_EN, "こんにちは！元気？"),
]


@pytest.mark.parametrize(("language", "system", "said"), TURNS, ids=["ja-after-en", "ja-in-en-talk", "en-after-ja"])
async def test_a_line_asked_for_in_a_language_comes_back_in_it(real_server: RealServer, language: str, system: str,
                                                               said: str) -> None:
    model = OpenAIChatModel(base_url=real_server.base_url, model=real_server.model, timeout_s=120)
    messages = (ChatMessage.system(system), ChatMessage.user(said))
    try:
        # What the model does by itself (temperature 0): it follows the words it read last.
        free = await complete(model, ChatRequest(messages=messages, temperature=0.0, max_tokens=40))
        assert detect_language(free.message.content or "") != language, free.message.content
        kept = await complete(model, ChatRequest(messages=messages, temperature=0.0, max_tokens=40,
                                                 written_in=language))
    finally:
        await model.aclose()
    line = kept.message.content or ""
    assert detect_language(line) == language, line
