"""The languages Madoi speaks: a companion's lines, its prompts and its voice, the window's words.

One type for all of them: ``Language`` ("ja" or "en") and ``LANGUAGES``, their order wherever both are listed.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

Language: TypeAlias = Literal["ja", "en"]
LANGUAGES: Final[tuple[Language, ...]] = ("ja", "en")
