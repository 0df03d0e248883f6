"""Turns that need no vote round, and how long a vote round may take on the participants' model servers.

A vote round costs one model request per voter before anyone says a word (one per endpoint where the voters share
a server with fewer slots than them: a joint ballot, companions/companion/joint_vote.py). Measured on a
one-request-at-a-time local server (llama-cpp-python, a 0.5B model on two cores), the votes were 77% of a turn and
the first line came 10-14 s after the user's message. So the manager skips the round where its outcome is known or
not worth the wait:

- **Named**: a user's message whose ``to`` names exactly one companion, or whose text (sent to everyone) names
  exactly one present companion ("Akari, what is your favourite star?"), is answered by that companion at once.
  A vote could only confirm it: being named always counts as ``selected``.
- **First**: on an endpoint that runs one request at a time (or where the measured vote round would take longer
  than ``slow_round_s``), a user's message to everyone is answered at once by the *likely speaker* (the one who
  spoke least lately, then the one whose persona shares most words with the message, then by id: deterministic).
  The others still take part: the next turn opens on that answer and its votes run while the answer is spoken.
- **The user is answered**: when every companion votes to listen to the user's own message, the likely speaker
  answers it anyway (a message the user wrote is never met with silence).

How long a vote round would take is deadline.py's estimate (it also decides the round's deadline). A late vote never
costs a named companion the floor, because being named is known without the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from companions.conversation.deadline import serial, vote_round_s
from companions.conversation.participant import Description, Pace
from companions.conversation.selection import Selection
from companions.wire.protocol import Message

# Words that can say what a message is about: Latin words, and pairs of kanji or katakana (hiragana pairs are
# mostly endings and greetings: "さん", "こん" would match any persona and decide by chance).
_WORD: Final = re.compile(r"[a-z0-9]{4,}|[\u30a0-\u30ff\u3400-\u9fff]{2}")
_COMMON: Final = frozenset({"about", "anyone", "does", "everyone", "have", "hello", "know", "likes", "that", "there",
                            "they", "this", "what", "when", "where", "which", "with", "would", "your"})


def _mentions(text: str, name: str) -> bool:
    name = name.strip().casefold()
    if not name:
        return False
    if name.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", text) is not None
    return name in text


def named_companion(message: Message, candidates: Iterable[str], names: Mapping[str, Iterable[str]], *,
                    user_id: str) -> str | None:
    """The one companion of ``candidates`` a user's message names, if exactly one: by ``to``, or (a message to
    everyone) by a name or id in its text. A ``to`` that lists every candidate is a message to everyone too: that is
    how one comes from another node (companions/network: reference nodes answer only messages naming them), and
    every node must take the same turn. (A companion's message lists everyone present in ``to``; its votes run
    while it is spoken, so it gets no shortcut.)"""
    allowed = set(candidates)
    to = {t for t in message.params.to if t != user_id}
    if len(to) == 1:
        only = next(iter(to))
        return only if only in allowed else None
    if to and not to >= allowed:
        return None
    text = message.params.message.casefold()
    hits = {c for c in allowed if any(_mentions(text, n) for n in (*names.get(c, ()), c))}
    return next(iter(hits)) if len(hits) == 1 else None


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold())) - _COMMON


def likely_speaker(candidates: Sequence[str], *, text: str, recent_turns: Mapping[str, int],
                   previous_speaker: str | None, personas: Mapping[str, str]) -> str | None:
    """Who most likely answers a message of ``text`` first, without asking a model (deterministic; ``None`` if
    nobody): not the previous speaker, then the one who spoke least lately, then the most words shared with
    the persona, then the id."""
    if not candidates:
        return None
    asked = _words(text)

    def key(companion: str) -> tuple[int, int, int, str]:
        overlap = len(asked & _words(personas.get(companion, "")))
        return (1 if companion == previous_speaker else 0, recent_turns.get(companion, 0), -overlap, companion)

    return min(candidates, key=key)


def answer_at_once(paces: Sequence[Pace], *, slow_round_s: float) -> bool:
    """Whether a user's message to everyone is answered by the likely speaker without waiting for votes."""
    if not paces:
        return False
    if serial(paces):
        return True
    estimate = vote_round_s(paces)
    return estimate is not None and estimate > slow_round_s


def direct_selection(trigger: Message, voters: Mapping[str, Description], *, user_id: str,
                     recent_turns: Mapping[str, int], previous_speaker: str | None,
                     slow_round_s: float) -> Selection | None:
    """The speaker order of a user's message that needs no vote round (named, or first on a slow endpoint), or
    ``None`` when the companions vote. The whole order is given, so a companion that cannot answer passes on."""
    if not voters:
        return None
    named = named_companion(trigger, voters, {v: d.names for v, d in voters.items()}, user_id=user_id)
    if named is not None:
        rest = tuple(v for v in voters if v != named)
        return Selection((named, *rest), f"{named} was named: answers without a vote", "named")
    if any(d.remote for d in voters.values()):
        return None
    paces = [p for d in voters.values() if (p := d.pace()) is not None]
    if not answer_at_once(paces, slow_round_s=slow_round_s):
        return None
    ranking = _likely_order(trigger, voters, recent_turns=recent_turns, previous_speaker=previous_speaker)
    return Selection(ranking, f"{ranking[0]} answers first: a vote round would be slow here", "first")


def user_answered(trigger: Message, voters: Mapping[str, Description], *, recent_turns: Mapping[str, int],
                  previous_speaker: str | None) -> Selection | None:
    """The speaker order when every companion voted to listen to the user's own message: the user's message is
    never left unanswered (a small model votes ``listen`` on a greeting as often as not), so the likely speaker
    answers; ``None`` when nobody may."""
    if not voters:
        return None
    ranking = _likely_order(trigger, voters, recent_turns=recent_turns, previous_speaker=previous_speaker)
    return Selection(ranking, f"{ranking[0]} answers you: nobody asked for the floor", "answers-user")


def _likely_order(trigger: Message, voters: Mapping[str, Description], *, recent_turns: Mapping[str, int],
                  previous_speaker: str | None) -> tuple[str, ...]:
    """Every voter, the likeliest speaker of ``trigger`` first (likely_speaker, again and again)."""
    ranking: list[str] = []
    left = list(voters)
    personas = {v: d.persona for v, d in voters.items()}
    while left:
        first = likely_speaker(left, text=trigger.params.message, recent_turns=recent_turns,
                               previous_speaker=previous_speaker, personas=personas)
        assert first is not None
        ranking.append(first)
        left.remove(first)
    return tuple(ranking)
