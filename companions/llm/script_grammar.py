"""Grammars that keep a plain-text reply in one language's script, for servers that take GBNF grammars.

A small model often answers in the language of the last words it read rather than the one its prompt asks for:
measured over 30 lines of a Japanese and English conversation on the 0.5B test model, 10 of the 17 lines that a
card's sample line had to stand in for were written in the other language (English answers to Japanese messages
after an English greeting, "こんにちは！…" to English ones), and with the same prompts at temperature 0 two of two
Japanese turns came back in English. llama.cpp samples only tokens a request's ``grammar`` allows, so a Japanese
reply that may hold no Latin letter is written in Japanese, and an English one without kana or kanji in English;
the line's checks still judge what it says.

Only the letters of the other script are excluded (digits, punctuation, emoji and line breaks stay), so a reply may
end wherever the model ends it.
"""

from __future__ import annotations

from typing import Final

from companions.common.languages import Language

_LATIN_LETTERS: Final = r"a-zA-Z\uff21-\uff3a\uff41-\uff5a"  # and their full-width forms (NFKC reads them as Latin)
_JAPANESE_SCRIPT: Final = (
    r"\u3000-\u30ff"  # CJK punctuation, hiragana, katakana
    r"\u3400-\u4dbf\u4e00-\u9fff"  # kanji
    r"\uff01-\uff20\uff3b-\uff40\uff5b-\uff9f"  # full-width punctuation and half-width katakana (not the letters)
)

SCRIPT_GRAMMARS: Final[dict[Language | str, str]] = {
    "ja": f"root ::= [^{_LATIN_LETTERS}]+",
    "en": f"root ::= [^{_JAPANESE_SCRIPT}]+",
}


def script_grammar(language: str) -> str | None:
    """The GBNF grammar that keeps a reply in ``language``'s script (None for a language without one)."""
    return SCRIPT_GRAMMARS.get(language)
