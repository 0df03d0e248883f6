"""The card files taken again while Madoi runs: a companion edited, made, imported, approved or removed is in the
conversation at once, without a restart.

:meth:`CastChanges.reload` reads the sample and user cards again and, for each companion whose card (as it may
run: held or approved, companions/cards/approval.py) differs from the running one, builds it anew
(:meth:`companions.companion.cast.CompanionCast.put`: its memory follows the conversation on the screen, its MCP servers
start, the old companion stops) and hands it to the conversation manager, which counts it from the next turn. A
companion whose card is gone leaves the conversation (its memory stays stored). Afterwards ``CastChanged``
tells the window's views which ids came, changed or went.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.cards.choices import use_voices
from app.settings.model import SettingsStore
from companions.cards.approval import CardTrust
from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.cast import CastChanged, CompanionCast
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationManager
from companions.wire.bus import Bus

log = logging.getLogger(__name__)


class CastChanges:
    """Takes the card files again into a running cast and conversation."""

    def __init__(self, loaded: SettingsStore, bus: Bus, cast: CompanionCast, manager: ConversationManager, *,
                 conversation: Callable[[], int | None], only: frozenset[str] | None = None) -> None:
        self.loaded = loaded
        self.bus = bus
        self.cast = cast
        self.manager = manager
        self._conversation = conversation  # the conversation on the screen: a new companion's memory follows it
        self._only = only

    def trust(self) -> CardTrust:
        return CardTrust.of([sample_cards_dir()], self.loaded.settings.trust.cards)

    async def reload(self) -> CastChanged:
        """Reads every card again and applies what changed; returns (and publishes) what did."""
        loaded = load_cards([sample_cards_dir(), self.loaded.paths.cards_dir])
        self.cast.problems = list(loaded.problems)
        trust = self.trust()
        added: list[str] = []
        changed: list[str] = []
        wanted: set[str] = set()
        for card in loaded.cards:
            if self._only is not None and card.id not in self._only:
                continue
            wanted.add(card.id)
            file = loaded.files[card.id]
            admitted, held = trust.admit(card, file)
            if held is not None:
                self.cast.held[card.id] = held
                log.warning("%s", held.describe())
            else:
                self.cast.held.pop(card.id, None)
            self.cast.files[card.id] = file
            running = self.cast.companions.get(card.id)
            if running is not None and running.card == admitted:
                continue
            companion = await self.cast.put(admitted, conversation=self._conversation())
            use_voices(self.loaded.settings, [companion])
            self.manager.add_participant(CompanionParticipant(companion))  # replaces the old one from the next turn
            (changed if running is not None else added).append(card.id)
        removed = sorted(set(self.cast.companions) - wanted)
        for companion_id in removed:
            self.manager.remove_participant(companion_id)
            await self.cast.remove(companion_id)
        for problem in loaded.problems:
            log.warning("companion card %s", problem)
        event = CastChanged(tuple(added), tuple(changed), tuple(removed), tuple(sorted(self.cast.held)))
        if added or changed or removed:
            log.info("companions: added %s, changed %s, removed %s", added, changed, removed)
        self.bus.publish(event)
        return event
