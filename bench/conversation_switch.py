"""What it costs that companions' memories follow the active conversation.

Switches between two stored conversations (the real ConversationStore and SqliteMemoryStore on one SQLite file,
the real bus) with three companions' memories following, each holding a full budget of lines in both
conversations, against the same switches with no memory to follow and against what the chat view does on a switch
(reading the conversation's stored messages), in the same run. Also reports the loop's longest stall during the
switches (the memories load in executor threads, so it should stay near the stall without memories).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import _report  # noqa: F401  (puts the repository on the path)
from _report import report

from app.conversations.active import Conversations, Memory
from app.memory.store import SqliteMemoryStore
from app.storage.database import ConversationStore
from companions.memory.context import CompanionMemory
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message

COMPANIONS = ("akari", "hina", "souta")
LINES = 150  # per conversation; the 2000-token budget keeps about 60 of them
SWITCHES = 200


class Idle:
    """The conversation manager when nothing is being said (the switch stops nothing)."""

    async def stop_conversation(self) -> object:
        return None

    def revise_message(self, message_id: str, text: str | None) -> None:
        return None


async def switch_times(conversations: Conversations, a: int, b: int) -> tuple[list[float], float]:
    """Seconds per switch, and the longest the loop was kept from a 1 ms timer meanwhile."""
    longest = 0.0
    running = True

    async def probe() -> None:
        nonlocal longest
        while running:
            began = time.perf_counter()
            await asyncio.sleep(0.001)
            longest = max(longest, time.perf_counter() - began - 0.001)

    watcher = asyncio.create_task(probe())
    times = []
    for i in range(SWITCHES):
        began = time.perf_counter()
        await conversations.switch(b if i % 2 == 0 else a)
        times.append(time.perf_counter() - began)
    running = False
    await watcher
    return times, longest


async def measure(folder: Path) -> None:
    store = ConversationStore(folder / "madoi.sqlite3")
    await store.open()
    bus = InProcessBus()
    memory_store = SqliteMemoryStore(folder / "madoi.sqlite3")
    memories = [CompanionMemory(name, store=memory_store) for name in COMPANIONS]
    a, b = await store.create_conversation(), await store.create_conversation()
    for conversation in (a, b):
        for memory in memories:
            await memory.follow(conversation)
        for i in range(LINES):
            said = Message.create(from_="user", message=f"会話{conversation}の{i}番目の話、山と海と空のこと")
            await store.add_message(conversation, said)
            for memory in memories:
                await memory.remember(said, "User")

    def following(chosen: list[CompanionMemory]) -> Conversations:
        def listed() -> Iterable[Memory]:
            return chosen

        return Conversations(store, bus, user_id=lambda: "user", talk=Idle(), memories=listed)

    without = following([])
    await without.start()
    with_memories = following(memories)
    await with_memories.start()
    for conversations in (without, with_memories, without, with_memories):  # warm up, then measure
        await conversations.switch(a)
        await switch_times(conversations, a, b)
    bare, bare_stall = await switch_times(without, a, b)
    timed, stall = await switch_times(with_memories, a, b)
    history = []
    for _ in range(SWITCHES):  # what the chat view does on the same switch: it reads the conversation's messages
        began = time.perf_counter()
        await store.messages(b)
        history.append(time.perf_counter() - began)
    print(f"memories hold {len(memories[0].entries)} lines each; {SWITCHES} switches per figure")
    report("switch_with_memories_p50", statistics.median(timed) * 1000, "ms", "switch_without_memories_p50",
           statistics.median(bare) * 1000)
    report("switch_with_memories_p50", statistics.median(timed) * 1000, "ms", "chat_view_history_load_p50",
           statistics.median(history) * 1000)
    report("switch_with_memories_p99", statistics.quantiles(timed, n=100)[98] * 1000, "ms",
           "switch_without_memories_p99", statistics.quantiles(bare, n=100)[98] * 1000)
    report("switch_loop_stall_max", stall * 1000, "ms", "loop_stall_max_without_memories", bare_stall * 1000)
    await without.stop()
    await with_memories.stop()
    memory_store.close()
    await bus.aclose()
    await store.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(measure(Path(folder)))


if __name__ == "__main__":
    main()
