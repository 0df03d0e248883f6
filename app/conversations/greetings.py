"""A new conversation opens with a companion's first greeting, as a SillyTavern user expects of a character card.

A card's ``greeting`` (the editor's "First greeting", a character card's ``first_mes``) is said when the user starts
a new conversation (New, Ctrl+N): the companion's own line, shown, stored, remembered and said aloud, with no model
request (``ConversationManager.greet``); the user answers it. Who greets (:func:`greeter`), among the companions
present and not muted:

1. the one chosen in To, when To names one;
2. else the only companion present;
3. else (several, to everyone or several ticked) the one of them whose card has a greeting, when exactly one has:
   SillyTavern's group chats post every member's first message, but here each would be said aloud in turn before
   the user could say a word. Of the sample companions only Akari has one (she opens the first conversation after
   the first-run card's "Talk now"); a group with more greetings lets the user speak first.

A companion whose card has no greeting never greets; one from elsewhere (the network, the bridge) has no card here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from app.runtime.runtime import Runtime
from companions.cards.card import localized
from companions.wire.protocol import Message


def greeter(present: Collection[str], addressed: Sequence[str], greetings: Mapping[str, str]) -> str | None:
    """Who opens a new conversation: ``present`` the companions here and not muted, ``addressed`` those chosen in
    To (empty: everyone), ``greetings`` the greeting of each of this app's companions that has one."""
    chosen = [c for c in addressed if c in present] or sorted(present)
    if len(chosen) == 1:
        return chosen[0] if greetings.get(chosen[0]) else None
    with_greeting = [c for c in chosen if greetings.get(c)]
    return with_greeting[0] if len(with_greeting) == 1 else None


async def greet_new_conversation(runtime: Runtime, addressed: Sequence[str]) -> Message | None:
    """The greeting of :func:`greeter`'s companion in the active conversation, if it is still empty; the message
    said, or None."""
    if not runtime.started:
        return None
    parts = runtime.parts
    conversation = parts.conversations.active_id
    if conversation is None or await runtime.store.messages(conversation, limit=1):
        return None  # something was said already: a greeting now would answer nothing
    manager = parts.conversation_manager
    present = manager.present - manager.control.muted
    greetings = {c.id: text for c in parts.cast if c.id in present
                 and (text := localized(c.card.greeting, c.language).strip())}
    who = greeter(present, addressed, greetings)
    return await manager.greet(who, greetings[who]) if who is not None else None
