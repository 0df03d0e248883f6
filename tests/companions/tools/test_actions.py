"""Built-in actions and knowledge, and a companion from a sample card answering end to end through `speak`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.llm.scripted import ScriptedModel, call, offers_tools, reply_json, say
from companions.llm.types import ImagePart
from companions.tools.builtins import BuiltinTools
from companions.tools.functions import ToolRegistry
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Action, CompanionMetadata, Message, Query, QueryResult
from companions.wire.query_broker import QueryBroker


class StandInResponder:
    """Answers one query type in-process; holds speech until released, like a voice that takes time."""

    def __init__(self, query_type: str, body: dict[str, object] | None = None, *, hold: bool = False) -> None:
        self.query_type = query_type
        self.body = body or {}
        self.received: list[Query] = []
        self.got = asyncio.Event()
        self.release = asyncio.Event()
        if not hold:
            self.release.set()

    async def respond(self, query: Query) -> QueryResult:
        self.received.append(query)
        self.got.set()
        await self.release.wait()
        return QueryResult.ok(query.id, self.body)


@pytest.fixture
async def world() -> AsyncIterator[tuple[InProcessBus, QueryBroker, list[object]]]:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    published: list[object] = []
    bus.subscribe(["messages", "actions"], published.append, name="test")
    yield bus, broker, published
    await broker.aclose()
    await bus.aclose()


async def test_a_sample_companion_answers_by_speaking_and_the_message_follows_the_speech(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, published = world
    voice = StandInResponder("speak", hold=True)
    broker.register(voice)
    card = load_cards([sample_cards_dir()]).by_id()["akari"]
    model = ScriptedModel("akari-model")
    model.lane("event_params").add(reply_json({"already_replied": True, "need_response": True, "wants_to_see": False}))
    model.add(
        call("speak", {"message": "Akari: Hi! Nice to meet you.\nUser: hello Akari", "emotion": "happy"},
             expect=offers_tools("speak", "gesture", "companions_network", "vision")),
        say(""),
    )
    akari = Companion(card, model, bus=bus, queries=broker, language="en", names={"user": "Taro"}.get)
    await akari.start()
    user_message = Message.create(from_="user", message="Hi Akari, who are you?", to=["akari"])
    bus.publish(user_message)
    await bus.drain()
    turn = asyncio.create_task(akari.take_turn(user_message))
    await asyncio.wait_for(voice.got.wait(), 5)
    await bus.drain()
    assert [m for m in published if isinstance(m, Message) and m.params.from_ == "akari"] == []
    voice.release.set()
    result = await asyncio.wait_for(turn, 5)
    await bus.drain()
    assert result.status == "finished"
    speech = voice.received[0].params
    assert speech.from_ == "akari"
    assert speech.type == "speak"
    assert speech.body == {"message": "Hi! Nice to meet you.", "emotion": "happy",
                           "voice": "en-us;rate=185;half_tone=2.5;all_pass=0.52"}  # the card's voice with its tuning
    said = [m for m in published if isinstance(m, Message) and m.params.from_ == "akari"]
    assert len(said) == 1
    assert said[0].params.message == "Hi! Nice to meet you."
    assert said[0].params.to == ["user"]
    assert said[0].params.metadata is not None
    assert said[0].params.metadata.emotion == "happy"
    # The turn's guidance came from the card's CEL events, and the system prompt was English.
    turn_request = model.requests_in("")[0]
    assert "Reply using the speak tool." in turn_request.messages[-1].text
    assert turn_request.messages[1].text == "Taro (id: user): Hi Akari, who are you?"
    # Akari remembers what she heard and what she said, as herself.
    assert [(e.role, e.text) for e in akari.memory.entries] == [
        ("heard", "Hi Akari, who are you?"), ("said", "Hi! Nice to meet you.")]
    model.assert_used_up()
    await akari.aclose()


async def test_a_companion_hears_only_what_is_meant_for_it_while_present(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, _ = world
    card = load_cards([sample_cards_dir()]).by_id()["hina"]
    hina = Companion(card, ScriptedModel("hina"), bus=bus, queries=broker, language="ja")
    await hina.start()
    bus.publish(Message.create(from_="user", message="みんな、こんにちは"))
    bus.publish(Message.create(from_="user", message="颯太だけに内緒の話", to=["souta"]))
    bus.publish(Message.create(from_="souta", message="ひなさん、どう思う？", to=["hina", "user"]))
    await bus.drain()
    hina.present = False
    bus.publish(Message.create(from_="user", message="ひながいない間の話"))
    await bus.drain()
    assert [e.text for e in hina.memory.entries] == ["みんな、こんにちは", "ひなさん、どう思う？"]
    await hina.aclose()


def builtins(bus: InProcessBus, broker: QueryBroker, model: ScriptedModel, **kw: object) -> ToolRegistry:
    roster = [CompanionMetadata(id="akari", name="Akari"), CompanionMetadata(id="souta", name="Souta", story="x")]
    tools = BuiltinTools("akari", bus=bus, queries=broker, model=model, roster=lambda: roster, **kw)  # type: ignore[arg-type]
    registry = ToolRegistry()
    tools.register(registry, ["speak", "gesture", "companions_network", "vision", "search"])
    return registry


async def test_gesture_publishes_an_action_from_the_companion(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, published = world
    registry = builtins(bus, broker, ScriptedModel("m"))
    result = await registry.run("gesture", {"type": "wave"})
    bad = await registry.run("gesture", {"type": "moonwalk"})
    await bus.drain()
    actions = [a for a in published if isinstance(a, Action)]
    assert not result.is_error
    assert bad.is_error
    assert len(actions) == 1
    assert actions[0].params.from_ == "akari"
    assert actions[0].params.params == {"type": "wave"}


async def test_companion_network_lists_the_others(world: tuple[InProcessBus, QueryBroker, list[object]]) -> None:
    bus, broker, _ = world
    result = await builtins(bus, broker, ScriptedModel("m")).run("companions_network", {})
    assert '"id": "souta"' in result.content
    assert '"id": "akari"' not in result.content


async def test_vision_describes_with_the_model_or_labels_the_on_device_description(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, _ = world
    broker.register(StandInResponder("vision", {"image": "aGVsbG8=", "description": "a person waving"}))
    blind = ScriptedModel("blind", supports_images=False)
    text_only = await builtins(bus, broker, blind).run("vision", {})
    assert text_only.content == "On-device description of the camera picture (not your own eyes): a person waving"
    seeing = ScriptedModel("seeing", say("A smiling person waves at the camera."))
    described = await builtins(bus, broker, seeing).run("vision", {})
    assert described.content == "What you see: A smiling person waves at the camera."
    parts = seeing.requests[0].messages[0].content
    assert isinstance(parts, list)
    assert ImagePart(url="data:image/jpeg;base64,aGVsbG8=") in parts
    seeing.assert_used_up()
    blind.assert_used_up()


async def test_vision_without_a_camera_is_a_readable_result(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, _ = world
    result = await builtins(bus, broker, ScriptedModel("m")).run("vision", {})
    assert "could not see" in result.content


async def test_speech_failure_still_shows_the_text(world: tuple[InProcessBus, QueryBroker, list[object]]) -> None:
    bus, broker, published = world

    class Mute:
        query_type = "speak"

        async def respond(self, query: Query) -> QueryResult:
            return QueryResult.fail(query.id, "no audio device")

    broker.register(Mute())
    result = await builtins(bus, broker, ScriptedModel("m")).run("speak", {"message": "hello", "to": ["user"]})
    await bus.drain()
    assert "no audio device" in result.content
    assert [m.params.message for m in published if isinstance(m, Message)] == ["hello"]


async def test_search_uses_the_port(world: tuple[InProcessBus, QueryBroker, list[object]]) -> None:
    bus, broker, _ = world

    class Engine:
        async def search(self, query: str) -> str:
            return f"found: {query}"

    without = await builtins(bus, broker, ScriptedModel("m")).run("search", {"query": "maps"})
    assert "not available" in without.content
    found = await builtins(bus, broker, ScriptedModel("m"), search_engine=Engine()).run("search", {"query": "maps"})
    assert found.content == "found: maps"


async def test_speak_maps_names_to_ids_and_drops_unknown_addressees(
    world: tuple[InProcessBus, QueryBroker, list[object]],
) -> None:
    bus, broker, published = world
    broker.register(StandInResponder("speak"))
    registry = builtins(bus, broker, ScriptedModel("m"), default_audience=lambda: ["user"])
    await registry.run("speak", {"message": "hi", "to": ["Souta", "akari", "nobody"]})
    await registry.run("speak", {"message": "hello", "to": ["nobody"]})
    await bus.drain()
    assert [(m.params.message, m.params.to) for m in published if isinstance(m, Message)] == [
        ("hi", ["souta"]), ("hello", ["user"])]
