"""Who a message is addressed to: the companions that vote on it, and whether one was asked directly."""

from __future__ import annotations

from collections.abc import Iterable

from companions.wire.protocol import Message


def addressees(message: Message, present: Iterable[str], user_id: str) -> tuple[str, ...]:
    """The present companions a message is addressed to, sorted by id; the sender never votes on its own words.

    An empty ``to`` means everyone present (the reference's user messages; a companion's message to nobody in
    particular is treated the same way).
    """
    present_ids = sorted(set(present))
    sender = message.params.from_
    to = set(message.params.to)
    if not to:
        return tuple(p for p in present_ids if p != sender)
    return tuple(p for p in present_ids if p in to and p not in (sender, user_id))


def only_companion_addressed(message: Message, who: str, user_id: str) -> bool:
    """``who`` is the one companion the message's ``to`` names (asked directly, not one of a crowd)."""
    companions = {t for t in message.params.to if t != user_id}
    return companions == {who}
