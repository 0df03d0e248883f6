"""Akari (vision) and Souta (search) of the sample cards under the real conversation manager, with the app's trust
policy and doubles of the camera, the voice, the search and the recall."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationConfig, ConversationManager
from companions.conversation.readmodel import ConversationChanged
from companions.llm.scripted import ScriptedModel, call, last_message_mentions, reply_json
from companions.memory.recall import RecalledItem
from companions.testing.scripted_consent import ScriptedUser
from companions.trust.policy import TrustPolicy
from companions.trust.sources import SourceDirectory
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Camera, Voice


class Search:
    def __init__(self) -> None:
        self.queries: list[str] = []

    async def search(self, query: str) -> str:
        self.queries.append(query)
        return "the user's diary: ..."


@dataclass
class House:
    """Akari (vision) and Souta (search) of the sample cards under the real manager, with the app's trust."""

    bus: InProcessBus
    user: ScriptedUser
    models: dict[str, ScriptedModel]
    camera: Camera
    search: Search
    manager: ConversationManager
    companions: list[Companion]
    broker: QueryBroker
    ended: asyncio.Event

    @classmethod
    async def open(cls, bus: InProcessBus, user: ScriptedUser) -> House:
        directory = SourceDirectory(user_id="user", own=lambda: ["akari", "souta"])
        trust = TrustPolicy(asker=user, bus=bus, sources=directory.source)
        broker = QueryBroker(bus, trust=trust)
        await broker.start()
        camera, search = Camera(), Search()
        broker.register(camera)
        broker.register(Voice())
        cards = load_cards([sample_cards_dir()]).by_id()
        models = {"akari": ScriptedModel("akari", supports_images=False), "souta": ScriptedModel("souta")}
        companions: list[Companion] = []
        for name in ("akari", "souta"):
            companions.append(Companion(cards[name], models[name], bus=bus, queries=broker, language="en",
                                        roster=lambda: [c.metadata for c in companions], search_engine=search,
                                        trust=trust))
        manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=5.0, turn_cap=2),
                                      participants=[CompanionParticipant(c) for c in companions])
        ended = asyncio.Event()
        bus.subscribe("events", lambda e: ended.set() if isinstance(e, ConversationChanged)
                      and e.view.status == "ended" else None, name="test-ended")
        for companion in companions:
            await companion.start()
        await manager.start()
        return cls(bus, user, models, camera, search, manager, companions, broker, ended)

    def script(self, *, akari_result: str, souta_result: str) -> None:
        """Akari looks, then asks Souta; Souta searches, then answers."""
        akari, souta = self.models["akari"], self.models["souta"]
        akari.lane("event_params").add(
            reply_json({"already_replied": False, "need_response": True, "wants_to_see": True}))
        akari.add(call("vision", {}),
                  call("speak", {"message": "Souta, can you check the notes?", "to": ["souta"]},
                       expect=last_message_mentions(akari_result)))
        souta.lane("vote").add(reply_json({"state": "speak", "importance": 8,
                                           "params": {"need_response": True, "needs_facts": True}}))
        souta.add(call("search", {"query": "notes"}),
                  call("speak", {"message": "Nothing I may tell."}, expect=last_message_mentions(souta_result)))

    async def says(self, sender: str, text: str) -> None:
        self.bus.publish(Message.create(from_=sender, message=text, to=["akari"]))
        await asyncio.wait_for(self.ended.wait(), 20)
        await self.bus.drain()

    async def aclose(self) -> None:
        await self.manager.stop()
        for companion in self.companions:
            await companion.aclose()
        await self.broker.aclose()
        for model in self.models.values():
            model.assert_used_up()


class Diary:
    """The Recall port's double: the user's past conversations hold one line about their diary."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def recall(self, companion_id: str, text: str, *, before: float | None = None, limit: int | None = None,
                     exclude: Collection[str] = ()) -> list[RecalledItem]:
        self.asked.append(text)
        return [RecalledItem(kind="line", message_id="m-old", text="My diary's password is hoshizora.", at=1.7e9,
                             score=1.0, speaker_id="user", speaker_name="user", source="conversation:1")]
