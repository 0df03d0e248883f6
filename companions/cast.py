"""The cast: every companion of the app, built from the companion cards, sharing one roster (who is present)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from companions.actions import SearchEngine
from companions.bus import Bus
from companions.cards import CardProblem, CompanionCard, load_cards
from companions.companion import Companion
from companions.llm.types import ChatModel
from companions.mcp_config import McpServer
from companions.memory import SqliteMemoryStore
from companions.ports import QuerySender
from companions.protocol import CompanionMetadata


class CompanionCast:
    """Every companion of the app, sharing one roster (who is present); a runtime component (start/stop)."""

    name = "companions"

    def __init__(self, problems: Sequence[CardProblem] = (), store: SqliteMemoryStore | None = None) -> None:
        self.companions: dict[str, Companion] = {}
        self.problems = list(problems)
        self.store = store
        # Companions present from elsewhere (companions/network): they are in every companion's roster too.
        self.guests: Callable[[], Sequence[CompanionMetadata]] = tuple

    def roster(self) -> list[CompanionMetadata]:
        return [*(c.metadata for c in self.companions.values() if c.present), *self.guests()]

    def name_of(self, companion_id: str) -> str | None:
        """The name of a companion here, or of one present from elsewhere (a guest); None for anyone else."""
        companion = self.companions.get(companion_id)
        if companion is not None:
            return companion.name
        return next((m.name for m in self.guests() if m.id == companion_id), None)

    def add(self, companion: Companion) -> None:
        self.companions[companion.id] = companion

    def __iter__(self) -> Iterator[Companion]:
        return iter(self.companions.values())

    def __len__(self) -> int:
        return len(self.companions)

    async def start(self) -> None:
        for companion in self.companions.values():
            await companion.start()

    async def stop(self) -> None:
        for companion in reversed(list(self.companions.values())):
            await companion.aclose()
        if self.store is not None:
            self.store.close()

    def set_language(self, language: str) -> None:
        """Every companion speaks ``language`` from its next prompt on (the user switched the interface's)."""
        for companion in self.companions.values():
            companion.language = language


def build_cast(
    folders: Sequence[Path],
    make_model: Callable[[CompanionCard], ChatModel],
    *,
    bus: Bus,
    queries: QuerySender,
    language: str = "ja",
    memory_path: Path | None = None,
    memory_budget_tokens: int = 2000,
    search_engine: SearchEngine | None = None,
    user_id: str = "user",
    user_names: Callable[[str], str | None] = lambda _id: None,
    mcp_servers: Sequence[McpServer] = (),
    report: Callable[[str], None] | None = None,
) -> CompanionCast:
    """Loads the cards in ``folders`` (samples first, then the user's) and builds one companion per card.

    ``make_model`` picks each companion's ChatModel (its card's ``llm`` section over the app settings). Broken
    cards end up in ``cast.problems`` for the UI; the others still come to life. ``mcp_servers`` are every
    companion's (beside its card's own); ``report`` hears each tool source's problem (companions/tool_sources.py).
    """
    loaded = load_cards(folders)
    store = SqliteMemoryStore(memory_path) if memory_path is not None else None
    cast = CompanionCast(loaded.problems, store)

    def names(speaker_id: str) -> str | None:
        return cast.name_of(speaker_id) or user_names(speaker_id)

    for card in loaded.cards:
        cast.add(Companion(card, make_model(card), bus=bus, queries=queries, language=language, store=store,
                           memory_budget_tokens=memory_budget_tokens, roster=cast.roster, names=names,
                           search_engine=search_engine, user_id=user_id, mcp_servers=mcp_servers, report=report))
    return cast
