"""The cast: every companion of the app, built from the companion cards, sharing one roster (who is present).

Cards that the user added run nothing and send no key until approved (companions/cards/approval.py): such a card's
companion takes part held, and the cast lists what it holds back in ``held``. The cast can take a card again while
running (:meth:`CompanionCast.put`, :meth:`CompanionCast.remove`): the user edited, added, imported, approved or
removed a companion; the caller hands the conversation the new companion.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from companions.cards.approval import CardTrust, HeldCard
from companions.cards.card import CardProblem, CompanionCard, load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.guests import Guests
from companions.llm.types import ChatModel
from companions.memory.context import MemoryStore
from companions.memory.recall import CompanionRecall
from companions.tools.builtins import SearchEngine
from companions.tools.mcp_config import McpServer
from companions.trust.policy import TrustPolicy
from companions.wire.bus import Bus, LocalEvent
from companions.wire.protocol import CompanionMetadata
from companions.wire.query_ports import QuerySender

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CastChanged(LocalEvent):
    """The app's companions changed while running: ``added``, ``changed`` (a new card: name, colour, avatar, words,
    tools) and ``removed`` ids; ``held`` the ids whose cards wait for the user's approval now."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    held: tuple[str, ...] = ()


class CompanionCast:
    """Every companion of the app, sharing one roster (who is present); a runtime component (start/stop).

    ``make`` builds a companion from a card as it may run (held or trusted); :meth:`put` uses it."""

    name = "companions"

    def __init__(self, problems: Sequence[CardProblem] = (), store: MemoryStore | None = None,
                 make: Callable[[CompanionCard], Companion] | None = None, guests: Guests | None = None) -> None:
        self.companions: dict[str, Companion] = {}
        self.problems = list(problems)
        self.store = store
        self.held: dict[str, HeldCard] = {}  # by id: cards whose programs and keys wait for the user's approval
        self.files: dict[str, Path] = {}  # by id: the card file each companion came from
        self._make = make
        self._started = False
        # Companions present from elsewhere (the bridge's and the network's add and remove them,
        # companions/companion/guests.py): they are in every companion's roster too.
        self.guests = guests if guests is not None else Guests()
        self.trust_policy: TrustPolicy | None = None  # the one its companions answer to (build_cast), if any

    def roster(self) -> list[CompanionMetadata]:
        return [*(c.metadata for c in self.companions.values() if c.present), *self.guests.metadata()]

    def name_of(self, companion_id: str) -> str | None:
        """The name of a companion here, or of one present from elsewhere (a guest); None for anyone else."""
        companion = self.companions.get(companion_id)
        if companion is not None:
            return companion.name
        return self.guests.name_of(companion_id)

    def add(self, companion: Companion) -> None:
        self.companions[companion.id] = companion

    def __iter__(self) -> Iterator[Companion]:
        return iter(self.companions.values())

    def __len__(self) -> int:
        return len(self.companions)

    async def start(self) -> None:
        self._started = True
        for companion in list(self.companions.values()):
            await companion.start()

    async def stop(self) -> None:
        self._started = False
        for companion in reversed(list(self.companions.values())):
            await companion.aclose()
        if self.store is not None:
            self.store.close()

    def set_language(self, language: str) -> None:
        """Every companion speaks ``language`` from its next prompt on (the user switched the interface's)."""
        for companion in self.companions.values():
            companion.language = language

    async def put(self, card: CompanionCard, *, conversation: int | None = None) -> Companion:
        """The companion of ``card`` (as it may run) replaces the one with its id, or joins: built, its memory
        following ``conversation`` (the one on the screen), started when the cast runs; the one it replaces is
        stopped (its MCP servers close). Returns the new companion; the caller hands it to the conversation."""
        if self._make is None:
            raise RuntimeError("this cast was built without a way to make companions")
        companion = self._make(card)
        old = self.companions.get(card.id)
        if old is not None:
            companion.present = old.present
            companion.language = old.language
        if conversation is not None:
            await companion.memory.follow(conversation)
        if self._started:
            await companion.start()
        self.companions[card.id] = companion
        if old is not None:
            await old.aclose()
        return companion

    async def remove(self, companion_id: str) -> Companion | None:
        """Takes a companion out of the cast and stops it (its memory stays stored)."""
        self.held.pop(companion_id, None)
        self.files.pop(companion_id, None)
        companion = self.companions.pop(companion_id, None)
        if companion is not None:
            await companion.aclose()
        return companion


def build_cast(
    folders: Sequence[Path],
    make_model: Callable[[CompanionCard], ChatModel],
    *,
    bus: Bus,
    queries: QuerySender,
    language: str = "ja",
    store: MemoryStore | None = None,
    memory_budget_tokens: int = 2000,
    search_engine: SearchEngine | None = None,
    user_id: str = "user",
    user_names: Callable[[str], str | None] = lambda _id: None,
    mcp_servers: Sequence[McpServer] = (),
    report: Callable[[str], None] | None = None,
    trust: CardTrust | None = None,
    trust_policy: TrustPolicy | None = None,
    recall: Callable[[str], CompanionRecall] | None = None,
    only: Collection[str] | None = None,
) -> CompanionCast:
    """Loads the cards in ``folders`` (samples first, then the user's) and builds one companion per card.

    ``make_model`` picks each companion's ChatModel (its card's ``llm`` section over the app settings). Broken
    cards end up in ``cast.problems`` for the UI; the others still come to life. ``mcp_servers`` are every
    companion's (beside its card's own); ``report`` hears each tool source's problem (companions/tools/sources.py)
    and each card held for approval. ``trust`` says which cards may run and send what they ask (default: the
    sample cards only); the others are built held (companions/cards/approval.py). The companions' memory is kept in
    ``store`` (the app's is app/memory/store.py; the cast closes it when it stops); ``recall`` gives a companion its
    long-term recall by id (a companion built while running too). ``only``: the ids of the companions to build (the
    others run elsewhere).
    """
    loaded = load_cards(folders)
    trust = trust if trust is not None else CardTrust.of([sample_cards_dir()])

    def names(speaker_id: str) -> str | None:
        return cast.name_of(speaker_id) or user_names(speaker_id)

    def make(card: CompanionCard) -> Companion:
        return Companion(card, make_model(card), bus=bus, queries=queries, language=language, store=store,
                         memory_budget_tokens=memory_budget_tokens, roster=cast.roster, names=names,
                         search_engine=search_engine, user_id=user_id, mcp_servers=mcp_servers, report=report,
                         trust=trust_policy,  # what a turn from outside the window may use (companions/trust/policy.py)
                         recall=recall(card.id) if recall is not None else None)

    cast = CompanionCast(loaded.problems, store, make)
    cast.trust_policy = trust_policy  # the network link asks it too (which peers may get a private line)
    for card in loaded.cards:
        if only is not None and card.id not in only:  # `madoi --headless --companions souta`: the others elsewhere
            continue
        file = loaded.files[card.id]
        admitted, held = trust.admit(card, file)
        if held is not None:
            cast.held[card.id] = held
            log.warning("%s", held.describe())
            if report is not None:
                report(held.describe())
        cast.files[card.id] = file
        cast.add(make(admitted))
    return cast
