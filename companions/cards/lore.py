"""A companion's lorebook (an imported character card's ``character_book``): what it knows, brought up by keyword.

As in the character-card tools people use, an entry comes into the companion's prompt when one of its keywords
appears in what is being said (the message it answers and the lines just before it), case-insensitively, or always
when it is constant; entries that are switched off never do. The entries found go in as one system message after
the stable prefix (persona and conversation: a server's prompt cache still reuses it), within a budget of
characters, first-listed first. No model is asked and nothing is searched: a handful of substring checks per turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from companions.cards.card import LoreEntry

BUDGET_CHARS: Final = 800  # about 200-400 tokens: a small local model's prompt stays short
HEADING: Final = {"ja": "あなたが知っていること（話題に出たもの）:", "en": "What you know (it came up):"}


def triggered(entries: Sequence[LoreEntry], texts: Iterable[str]) -> list[LoreEntry]:
    """The enabled entries that are constant or one of whose keywords appears in ``texts``, in the lorebook's
    order."""
    said = "\n".join(texts).casefold()
    return [e for e in entries if e.enabled and (e.constant or (said.strip() and any(
        k.strip() and k.strip().casefold() in said for k in e.keys)))]


def lore_block(entries: Sequence[LoreEntry], texts: Iterable[str], language: str,
               budget_chars: int = BUDGET_CHARS) -> str:
    """The system message of the entries ``texts`` bring up (empty when none), within ``budget_chars``."""
    if not entries:
        return ""
    lines: list[str] = []
    used = 0
    for entry in triggered(entries, texts):
        text = " ".join(entry.content.split())
        if used + len(text) > budget_chars:
            if used:
                break
            text = text[:budget_chars]
        lines.append(f"- {text}")
        used += len(text)
    if not lines:
        return ""
    return "\n".join([HEADING.get(language, HEADING["en"]), *lines])
