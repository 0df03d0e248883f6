"""A companion's context window: what one companion heard while present, and what it said, within a token budget.

A companion's context never holds what it did not hear, and it never speaks for others: :func:`strip_impersonation`
removes the lines a model writes in someone else's name (``"Bob: ..."``) and its own name prefix. Memory is kept
in a :class:`MemoryStore`, the port through which the core reaches stored memory (the app's is SQLite,
app/memory/store.py), so that a restart remembers.

Memory follows the user's conversations: each entry is kept under the conversation it was heard in, and a memory
holds one conversation at a time (:meth:`CompanionMemory.follow`, called when the user starts, switches to or
reopens one), so a companion's prompt carries the conversation on the screen and nothing of the others. Deleting a
conversation forgets its entries (:meth:`CompanionMemory.forget_conversation`). The entries are kept per
conversation rather than rebuilt from the stored conversation because only the memory knows what each companion
heard: it was absent for some lines, was not addressed by others, and a trimmed memory stays trimmed. Conversation
ids are the app's; ``None`` is the memory of a companion used without conversations (tests, benches).

The store keeps every entry, also those trimmed out of the context: it is the record of who heard what, which
long-term recall (companions/memory/recall.py) searches through. Deleting a conversation, editing or deleting a message,
and the user's "forget" (the Memory view's, app/memory/access.py; :meth:`CompanionMemory.forget_everything`) remove
entries from it.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, Protocol

from companions.llm.types import ChatMessage
from companions.wire.protocol import Message

EntryRole = Literal["heard", "said"]


@dataclass(frozen=True)
class MemoryEntry:
    seq: int
    role: EntryRole
    speaker_id: str
    speaker_name: str
    text: str
    message_id: str = ""
    at: float = 0.0
    # From an imported conversation: said elsewhere, never by this app's user or companions (untrusted when recalled)
    imported: bool = False


@dataclass(frozen=True)
class HeardLine:
    """A line a companion heard (or said), as its memory keeps it, with the conversation it was heard in."""

    entry: MemoryEntry
    conversation: int | None


CONTEXT_ROWS: Final = 2000  # entries loaded into a context at most (a 2,000-token context holds fewer)


class MemoryStore(Protocol):
    """Where companions' memories live between runs, each entry under the conversation it was heard in."""

    async def append(self, companion_id: str, conversation: int | None, entry: MemoryEntry) -> None: ...

    async def load(self, companion_id: str, conversation: int | None) -> list[MemoryEntry]:
        """The newest entries of ``companion_id`` in ``conversation`` (at least a context's worth), oldest first."""
        ...

    async def last_seq(self, companion_id: str) -> int:
        """The highest sequence number ``companion_id`` used in any conversation (0 for none)."""
        ...

    async def forget_conversation(self, conversation: int) -> None:
        """Drops every companion's entries of ``conversation`` (it was deleted)."""
        ...

    async def revise(self, companion_id: str, message_id: str, text: str | None) -> None:
        """The entry of ``message_id`` gets ``text``, or goes when ``text`` is None."""
        ...

    async def forget_companion(self, companion_id: str) -> int:
        """Drops every entry of ``companion_id``; returns how many there were."""
        ...

    def close(self) -> None:
        """Releases the store (the cast that was given it stops)."""
        ...


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: one per CJK character, about four characters per token otherwise."""
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in ("W", "F"))
    return wide + (len(text) - wide + 3) // 4 + 1


# The parts of a speaker label around a name: "- **Akari**:", "[souta]", "【ひな】", "あかり (id: akari):",
# "Akari (akari):", "Hina says:", "ひなは言った：", "ひなちゃん：".
_LABEL_OPEN: Final = r"(?:[-*>]\s+)?(?:\*\*|__)?[\[【(（]?\s*"
_LABEL_AFTER_NAME: Final = (
    r"(?![A-Za-z0-9_])(?:さん|ちゃん|くん|君|様|-(?:san|chan|kun))?"
    r"(?:\s*[(（]\s*(?:id\s*[:：=]\s*)?[\w.-]+\s*[)）])?"
    r"(?:\s+(?:says|said|replies|replied|asks|asked|answers|answered|adds|added)"
    r"|[はが](?:言った|言う|言いました|答えた|答えました|言って))?"
    r"\s*[\]】)）]?(?:\*\*|__)?"
    r"(?:\s*(?:\*\*|__)?[:：](?:\*\*|__)?|(?<=[\]】]))\s*"
)


def name_label(names: Iterable[str]) -> str | None:
    """A regular expression (unanchored) for a speaker label naming one of ``names``, or None for no names."""
    cleaned = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(n) for n in cleaned)
    return rf"{_LABEL_OPEN}(?:{alternatives}){_LABEL_AFTER_NAME}"


@functools.lru_cache(maxsize=64)
def _name_prefix(names: frozenset[str]) -> re.Pattern[str] | None:
    label = name_label(names)
    return None if label is None else re.compile(rf"^\s*{label}", re.IGNORECASE)


def strip_impersonation(text: str, own_names: Iterable[str], other_names: Iterable[str]) -> str:
    """Removes what a model wrote for others, and its own ``"Name:"`` prefixes.

    A line starting with another speaker's label (``Bob:``, ``**Bob**:``, ``[bob]``, ``Bob (id: bob):``,
    ``Bob says:``) opens that speaker's block, which lasts until a line starting with one of ``own_names``; those
    blocks are dropped. Own labels are removed (repeated ones too: ``Akari: Akari (akari): Hi``).
    """
    own = _name_prefix(frozenset(own_names))
    other = _name_prefix(frozenset(other_names))
    kept: list[str] = []
    in_other = False
    for line in text.splitlines():
        if own is not None and own.match(line):
            in_other = False
            rest = line
            while (m := own.match(rest)) is not None and m.end() > 0:
                rest = rest[m.end() :]
            kept.append(rest)
        elif other is not None and other.match(line):
            in_other = True
        elif not in_other:
            kept.append(line)
    return "\n".join(kept).strip()


class CompanionMemory:
    """One companion's remembered conversation (the one it follows), bounded by ``budget_tokens``."""

    def __init__(self, companion_id: str, *, budget_tokens: int = 2000, store: MemoryStore | None = None) -> None:
        self.companion_id = companion_id
        self.budget_tokens = budget_tokens
        self.store = store
        self.conversation: int | None = None  # the conversation whose entries this memory holds
        self._entries: list[MemoryEntry] = []
        self._tokens = 0
        self._next_seq = 1
        self._restored = False  # whether the entries are the store's of ``conversation``
        self._numbered = False  # whether ``_next_seq`` follows every number the store holds
        self._lock = asyncio.Lock()

    @property
    def entries(self) -> Sequence[MemoryEntry]:
        return tuple(self._entries)

    @property
    def tokens(self) -> int:
        return self._tokens

    @property
    def holds_imported(self) -> bool:
        """Whether the context holds a line of an imported conversation (one the user went back to): untrusted
        text in every prompt made from it."""
        return any(e.imported for e in self._entries)

    async def load(self) -> None:
        """Restores the entries the store keeps of the conversation followed (within the budget), unless they
        were restored already."""
        async with self._lock:
            if not self._restored:
                await self._restore()

    async def follow(self, conversation: int) -> None:
        """Holds what this companion heard in ``conversation`` from now on: the user started it, switched to it or
        reopened it. What is heard from now on is remembered under it; the entries of the conversation left stay
        in the store for when the user comes back (without a store, they are gone)."""
        if conversation == self.conversation and self._restored:
            return
        self.conversation, self._restored = conversation, False  # at once: a line heard meanwhile belongs to it
        async with self._lock:
            if self._restored:
                return
            if self.store is None:
                self._entries, self._tokens = [], 0
            await self._restore()

    async def forget_conversation(self, conversation: int) -> None:
        """The user deleted ``conversation``: nothing of it is remembered any more, by this companion or (in the
        store) by any other."""
        async with self._lock:
            if self.store is not None:
                await self.store.forget_conversation(conversation)
            if conversation == self.conversation:
                self._entries, self._tokens = [], 0

    async def _restore(self) -> None:
        if self.store is not None:
            self._entries = await self.store.load(self.companion_id, self.conversation)
            self._tokens = sum(estimate_tokens(e.text) for e in self._entries)
            if not self._numbered:  # sequence numbers are the companion's, across its conversations and runs
                self._next_seq = max(self._next_seq, await self.store.last_seq(self.companion_id) + 1)
                self._numbered = True
        self._restored = True
        self._trim()

    async def remember(self, message: Message, speaker_name: str) -> MemoryEntry:
        """Records ``message``: as said when it is this companion's own, as heard otherwise."""
        p = message.params
        role: EntryRole = "said" if p.from_ == self.companion_id else "heard"
        async with self._lock:
            entry = MemoryEntry(self._next_seq, role, p.from_, speaker_name, p.message, p.id, time.time())
            self._next_seq += 1
            self._entries.append(entry)
            self._tokens += estimate_tokens(entry.text)
            if self.store is not None:
                await self.store.append(self.companion_id, self.conversation, entry)
            self._trim()
        return entry

    async def revise(self, message_id: str, text: str | None) -> bool:
        """The user edited (``text``) or deleted (None) a message: what this companion remembers follows, in its
        context and in the store (which keeps the lines trimmed out of the context too). Returns whether the
        context held that message."""
        async with self._lock:
            index = next((i for i, e in enumerate(self._entries) if e.message_id == message_id), None)
            if index is None:
                if self.store is not None:
                    await self.store.revise(self.companion_id, message_id, text)
                return False
            old = self._entries[index]
            self._tokens -= estimate_tokens(old.text)
            if text is None:
                del self._entries[index]
            else:
                self._entries[index] = replace(old, text=text)
                self._tokens += estimate_tokens(text)
            if self.store is not None:
                await self.store.revise(self.companion_id, message_id, text)
        return True

    async def forget_everything(self) -> int:
        """The user erased what this companion remembers: its context and every entry in the store. Returns how
        many entries the store held."""
        async with self._lock:
            self._entries, self._tokens = [], 0
            if self.store is None:
                return 0
            return await self.store.forget_companion(self.companion_id)

    def _trim(self) -> None:
        """Drops the oldest entries from the context until it fits the budget (the store keeps them)."""
        while len(self._entries) > 1 and self._tokens > self.budget_tokens:
            self._tokens -= estimate_tokens(self._entries.pop(0).text)

    def as_messages(self) -> list[ChatMessage]:
        """The memory as chat messages: others as named user lines, this companion's own words as assistant."""
        messages: list[ChatMessage] = []
        for e in self._entries:
            if e.role == "said":
                messages.append(ChatMessage.assistant(e.text))
            else:
                messages.append(ChatMessage.user(f"{e.speaker_name} (id: {e.speaker_id}): {e.text}"))
        return messages
