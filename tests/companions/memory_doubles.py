"""A test double behind the memory port (companions/memory/context.py's MemoryStore): entries kept in a dict, for
the core's tests that need a memory to outlive its companion (the app's SQLite store is app/memory/store.py)."""

from __future__ import annotations

from dataclasses import replace

from companions.memory.context import MemoryEntry


class MemoryStoreDouble:
    """A MemoryStore in memory: one instance given to two casts one after the other is a restart that remembers."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, int], tuple[int | None, MemoryEntry]] = {}  # (companion, seq) -> entry
        self.closed = 0

    async def append(self, companion_id: str, conversation: int | None, entry: MemoryEntry) -> None:
        self.entries[(companion_id, entry.seq)] = (conversation, entry)

    async def load(self, companion_id: str, conversation: int | None) -> list[MemoryEntry]:
        return [e for (c, _), (conv, e) in sorted(self.entries.items()) if c == companion_id and conv == conversation]

    async def last_seq(self, companion_id: str) -> int:
        return max((seq for c, seq in self.entries if c == companion_id), default=0)

    async def forget_conversation(self, conversation: int) -> None:
        self.entries = {k: v for k, v in self.entries.items() if v[0] != conversation}

    async def revise(self, companion_id: str, message_id: str, text: str | None) -> None:
        for key, (conv, e) in list(self.entries.items()):
            if key[0] == companion_id and e.message_id == message_id:
                if text is None:
                    del self.entries[key]
                else:
                    self.entries[key] = (conv, replace(e, text=text))

    async def forget_companion(self, companion_id: str) -> int:
        gone = [k for k in self.entries if k[0] == companion_id]
        for key in gone:
            del self.entries[key]
        return len(gone)

    def close(self) -> None:
        self.closed += 1
