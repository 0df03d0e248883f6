"""System prompts built from a Companion Card and the user's language (texts in ``resources/prompts/<lang>.toml``)."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from companions.cards.card import CompanionCard, localized
from companions.common.languages import LANGUAGES
from companions.companion.lines import LineRules, card_sample_lines
from companions.wire.protocol import CompanionMetadata


@dataclass(frozen=True)
class PromptTexts:
    system: str
    guidance: str
    events: str
    vote: str
    closing: dict[str, str]
    joint_vote: dict[str, str]  # "members", "ballot", "named": one request's votes of several companions


def prompts_dir() -> Path:
    from resources import RESOURCES_DIR

    return RESOURCES_DIR / "prompts"


@functools.cache
def prompt_texts(language: str) -> PromptTexts:
    """The prompt texts of ``language`` (English when that language has none)."""
    lang = language if language in LANGUAGES else "en"
    data = tomllib.loads((prompts_dir() / f"{lang}.toml").read_text(encoding="utf-8"))
    return PromptTexts(
        system=data["system"].strip(),
        guidance=data["guidance"].strip(),
        events=data["events"].strip(),
        vote=data["vote"].strip(),
        closing={str(k): str(v) for k, v in data["closing"].items()},
        joint_vote={str(k): str(v).strip() for k, v in data["joint_vote"].items()},
    )


def _present(others: Sequence[CompanionMetadata], language: str) -> str:
    if not others:
        return "（なし）" if language == "ja" else "(nobody)"
    return ", ".join(f"{m.name} (id: {m.id})" for m in others)


def system_prompt(card: CompanionCard, language: str, present: Sequence[CompanionMetadata] = (),
                  max_chars: int | None = None) -> str:
    """The system prompt of ``card`` in ``language``, naming who else is present. It says how a line is said (in
    ``language``, within ``max_chars`` characters: by default the length of the card's sample line allows), so a
    turn with no instructions of its own sends the model nothing after the message it answers (a 0.5B model copied
    the instructions written after the message into its line: "日本語で「読書世界」を答える。")."""
    m = card.metadata
    if max_chars is None:
        max_chars = LineRules.from_samples({lang: localized(m.sample, lang) for lang in LANGUAGES}).limit(language)
    # str.format_map on a plain dict: card texts are data, so braces inside them are never interpreted.
    return prompt_texts(language).system.format_map(
        {
            "id": m.id,
            "name": localized(m.name, language),
            "personality": localized(m.personality, language),
            "story": localized(m.story, language),
            # The first sample line shows the voice: the others wait as lines of the companion's own (composing.py),
            # a prompt no longer for them (each cold request of a small model pays for every token of it).
            "sample": next(iter(card_sample_lines(localized(m.sample, language))), ""),
            "role": localized(card.role, language),
            "present": _present(present, language),
            "max_chars": str(max_chars),
        }
    )


def guidance_prompt(instructions: Sequence[str], language: str) -> str:
    """The turn's guidance: the instructions chosen by the card's events, one per line."""
    return prompt_texts(language).guidance.format_map({"instructions": "\n".join(f"- {i}" for i in instructions)})


def vote_prompt(language: str, closing_hint: str) -> str:
    """The instruction for a turn-taking vote (the State a companion publishes)."""
    return prompt_texts(language).vote.format_map({"closing_hint": closing_hint})


def closing_prompt(language: str, closing: str) -> str:
    """What to keep in mind when speaking at closing stage ``closing`` (empty for "none")."""
    return prompt_texts(language).closing.get(closing, "")


def joint_vote_members_prompt(language: str, members: Sequence[str]) -> str:
    """The beginning of a joint vote's instruction (companions/companion/joint_vote.py): its members, one line each."""
    return prompt_texts(language).joint_vote["members"].format_map({"members": "\n".join(members)})


def joint_vote_prompt(language: str, voters: Sequence[str], named: Sequence[str], closing_hint: str) -> str:
    """The instruction of a joint vote, after the conversation: who votes (ids), who was named or asked directly,
    and the closing stage the framework pushes toward."""
    texts = prompt_texts(language).joint_vote
    said = "\n" + texts["named"].format_map({"names": ", ".join(named)}) if named else ""
    return texts["ballot"].format_map({"voters": ", ".join(voters), "named": said, "closing_hint": closing_hint})
