"""Nothing seen or heard is taken back, within a time budget: a companion's line is shown
and voiced early only sentence by sentence as it passes the checks, the line said begins with what was shown, and a
retry happens only while it fits about one completion beyond the floor."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.filler import filler_reason
from companions.companion.participant import CompanionParticipant
from companions.companion.worker import TextStreamed
from companions.conversation import ConversationConfig, ConversationManager
from companions.conversation.readmodel import ConversationChanged
from companions.llm.capabilities import forget_endpoints
from companions.llm.openai_backend import RetryPolicy, build_chat_model
from companions.llm.scripted import ScriptedModel, reply_json, say
from companions.llm.types import ChatModel
from companions.testing.openai_server import PROFILES, OpenAITestServer, text_reply
from companions.testing.openai_server.demo_director import DemoDirector, request_kind
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Voice
from tests.companions.running import running

GREETING = "こんにちは！今日はみんな元気ですか。"


async def akari_answers(model: ChatModel, text: str, to: list[str] | None = None,
                        ) -> tuple[list[Message], list[str], list[str]]:
    """Akari (with Hina present) answers the user's ``text`` (to her alone by default; ``to=[]``: to everyone, which
    she answers without a vote on a one-request-at-a-time server): (her published lines, every piece of text
    streamed for the turn, every sentence voiced)."""
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    voice = Voice()
    broker.register(voice)
    published: list[Message] = []
    streamed: list[str] = []
    ended = asyncio.Event()
    bus.subscribe("messages", lambda m: published.append(m) if isinstance(m, Message) else None, name="test")
    bus.subscribe("events", lambda e: streamed.append(e.text) if isinstance(e, TextStreamed) and e.text
                  else ended.set() if isinstance(e, ConversationChanged) and e.view.status == "ended" else None,
                  name="test-events", direct=True)
    cards = load_cards([sample_cards_dir()]).by_id()
    companions: list[Companion] = []
    roster = lambda: [c.metadata for c in companions]  # noqa: E731
    hina_model = ScriptedModel("hina")
    for card, chat in ((cards["akari"], model), (cards["hina"], hina_model)):
        companions.append(Companion(card, chat, bus=bus, queries=broker, language="ja", roster=roster))
    akari = companions[0]
    manager = ConversationManager(bus, config=ConversationConfig(turn_cap=1, warm_after_s=None),
                                  participants=[CompanionParticipant(akari)])  # she answers; Hina only listens
    async with running(manager, companions, broker, bus):
        bus.publish(Message.create(from_="user", message=text, to=["akari"] if to is None else to))
        await asyncio.wait_for(ended.wait(), 20)
        await bus.drain()
    return [m for m in published if m.params.from_ == "akari"], streamed, voice.messages()


def akari_model(*lines: str) -> ScriptedModel:
    model = ScriptedModel("akari")
    model.lane("event_params").always(
        reply_json({"already_replied": True, "need_response": True, "wants_to_see": False}))
    model.add(*(say(line, chunks=[line[i:i + 3] for i in range(0, len(line), 3)]) for line in lines))
    return model


def begins(line: str, pieces: list[str]) -> bool:
    return "".join(line.split()).startswith("".join("".join(pieces).split()))


async def test_a_parroted_greeting_is_never_heard_and_the_line_is_its_checked_beginning() -> None:
    # measured: early speech voiced the user's own greeting, then the line was replaced and said again
    [line], streamed, said = await akari_answers(akari_model(GREETING), GREETING)
    assert line.params.message == "こんにちは！"
    assert "".join(streamed) == "こんにちは！"
    assert said == ["こんにちは！"]  # said once, early; nothing after it, nothing taken back


async def test_the_prompt_and_a_line_as_another_companion_are_never_shown() -> None:
    # measured: Akari's bubble streamed the prompt itself, then "こんにちは！私の名前はHinaです。", then a filler
    script = "(Instructions) # このターンの指示\n- ツールを使って返信する。\nこんばんは！私の名前はHinaです。"
    [line], streamed, said = await akari_answers(akari_model(script), "みんな、こんばんは！")
    assert line.params.message == "こんばんは！"
    assert all("指示" not in piece and "Hina" not in piece for piece in streamed)
    assert begins(line.params.message, streamed)
    assert said == ["こんばんは！"]


async def test_a_sentence_cut_off_by_the_token_limit_is_never_shown_heard_or_said() -> None:
    """Measured over 30 lines on the 0.5B model: Akari's line "こんにちは！\nまた、相手がおしゃべ", the request
    ended at its token limit mid-word."""
    cut = "こんにちは！\nまた、相手がおしゃべ"
    model = akari_model()
    model.add(dataclasses.replace(say(cut, chunks=[cut[i:i + 3] for i in range(0, len(cut), 3)]),
                                  finish_reason="length"))
    [line], streamed, said = await akari_answers(model, "みんな、こんばんは！")
    assert line.params.message == "こんにちは！"
    assert "".join(streamed) == "こんにちは！"
    assert said == ["こんにちは！"]
    model.assert_used_up()


async def test_a_line_flawed_from_its_first_sentence_is_asked_again_and_only_the_new_one_is_heard() -> None:
    model = akari_model("Hello everyone! How are you?", "こんばんは！みんな、今夜は星がきれいだね。")
    [line], streamed, said = await akari_answers(model, "みんな、こんばんは！")
    assert line.params.message == "こんばんは！みんな、今夜は星がきれいだね。"
    assert "".join(streamed) == line.params.message  # the English attempt never streamed
    assert "".join(said) == line.params.message
    model.assert_used_up()


async def test_a_retry_that_does_not_fit_the_time_budget_gives_the_cards_sample_line_at_once() -> None:
    forget_endpoints()
    profile = dataclasses.replace(PROFILES["llama-cpp-python"], gen_tps=None).scaled(0.05)
    async with OpenAITestServer(models=["m"], profile=profile, fallback=DemoDirector()) as server:
        model = build_chat_model(server.base_url, "m", retry=RetryPolicy(max_retries=0))
        # what the endpoint is known to do: one line of this size costs ~0.1 s there
        model.capabilities.record(prompt_tokens=800, ttft_s=0.08, completion_tokens=41, generation_s=0.02)
        model.capabilities.record(prompt_tokens=800, ttft_s=0.08, completion_tokens=41, generation_s=0.02)
        # the first attempt parrots the greeting, and takes far longer than a completion (a queue, a loaded machine)
        server.script(text_reply("Hello everyone! How are you?", chunks=["Hello everyone!", " How are you?"]))
        slow = asyncio.Event()

        async def hold() -> None:
            await server.wait_for_requests(1, timeout=10)
            await asyncio.sleep(0.5)
            slow.set()

        holder = asyncio.create_task(hold())
        original = model.stream

        async def delayed(request):  # type: ignore[no-untyped-def]
            async for event in original(request):
                yield event
            await slow.wait()

        model.stream = delayed  # type: ignore[method-assign]
        [line], streamed, said = await akari_answers(model, "みんな、こんばんは！", to=[])
        await holder
        assert turns(server) == 1  # no retry: it would not fit
        # not a stock filler: the card's own sample line, said first in this conversation
        assert line.params.message == "えっ、それほんと？ ねえねえ、もっと聞かせて！"
        assert filler_reason(line) is None
        assert streamed == []
        assert said == [line.params.message]


async def test_a_retry_that_fits_is_made() -> None:
    forget_endpoints()
    profile = dataclasses.replace(PROFILES["llama-cpp-python"], gen_tps=None).scaled(0.05)
    async with OpenAITestServer(models=["m"], profile=profile, fallback=DemoDirector()) as server:
        model = build_chat_model(server.base_url, "m", retry=RetryPolicy(max_retries=0))
        model.capabilities.record(prompt_tokens=800, ttft_s=2.0, completion_tokens=41, generation_s=1.0)
        server.script(text_reply("Hello everyone!"), text_reply("こんばんは！今夜は晴れだね。"))
        [line], _, _ = await akari_answers(model, "みんな、こんばんは！", to=[])
        assert line.params.message == "こんばんは！今夜は晴れだね。"
        assert filler_reason(line) is None
        assert turns(server) == 2
        server.assert_used_up()


def turns(server: OpenAITestServer) -> int:
    """The line requests the server got (the card's events are filled after the line, by the director)."""
    return sum(request_kind(r.body) == "turn" and r.body.get("max_tokens") != 1 for r in server.chat_requests())


@contextlib.asynccontextmanager
async def akari_alone(model: ScriptedModel) -> AsyncIterator[Companion]:
    """Akari (the sample card) on ``model``, with Hina present, on a bus of her own; closed on the way out."""
    bus = InProcessBus()
    cards = load_cards([sample_cards_dir()]).by_id()
    akari = Companion(cards["akari"], model, bus=bus, queries=QueryBroker(bus), language="ja",
                      roster=lambda: [cards[c].wire_metadata("ja") for c in ("akari", "hina")])
    try:
        yield akari
    finally:
        await akari.aclose()
        await bus.aclose()


async def test_a_line_said_before_the_user_spoke_again_is_no_repeat_but_one_said_since_is() -> None:
    from companions.companion.composing import FillerLine

    model = akari_model("こんばんは！", "こんばんは！", "また会えたね！")
    async with akari_alone(model) as akari:
        earlier = [Message.create(from_="user", message="こんばんは", to=[]),
                   Message.create(from_="hina", message="こんばんは！", to=[])]
        back = Message.create(from_="user", message="みんな、また来たよ！", to=["akari"])
        for message in (*earlier, back):
            await akari.hear(message)
        # measured: a second start's greeting was replaced by a filler as a repeat of one said an hour before
        line = await akari.compose(back)
        assert line is not None
        assert line.text == "こんばんは！"
        assert not isinstance(line, FillerLine)
        # Hina greets after the user's message: the same greeting from Akari now is a repeat, asked again
        since = Message.create(from_="hina", message="こんばんは！", to=[])
        await akari.hear(since)
        again = await akari.compose(since)
        assert again is not None
        assert again.text == "また会えたね！"


async def test_a_companions_own_line_said_again_in_a_later_conversation_is_asked_again() -> None:
    # measured over 30 lines on the real model: Akari's "こんにちは！私のアシスタントは…" in three conversations
    model = akari_model("今夜は星がきれいだね！", "今夜は星がきれいだね！", "また会えたね、うれしい！")
    async with akari_alone(model) as akari:
        first = Message.create(from_="user", message="こんばんは", to=["akari"])
        await akari.hear(first)
        line = await akari.compose(first)
        assert line is not None
        await akari.hear(Message.create(from_="akari", message=line.text, to=["user"]))
        await akari.memory.follow(2)  # another conversation: none of the first one's lines are in the context
        later = Message.create(from_="user", message="また来たよ！", to=["akari"])
        await akari.hear(later)
        again = await akari.compose(later)
        assert again is not None
        assert again.text == "また会えたね、うれしい！"
        model.assert_used_up()


async def test_the_events_filled_after_a_line_stop_when_the_user_speaks_again() -> None:
    from companions.llm.scripted import stall

    model = ScriptedModel("akari")
    model.lane("event_params").add(stall())  # a slow grammar-constrained request on a one-request server
    model.add(say("こんばんは！"))
    async with akari_alone(model) as akari:
        greeting = Message.create(from_="user", message="みんな、こんばんは！", to=[])
        await akari.hear(greeting)
        line = await akari.compose(greeting)
        assert line is not None
        assert line.text == "こんばんは！"
        filling = akari._events_later
        assert filling is not None
        await asyncio.sleep(0)  # the events request is under way, after the line
        # measured on the real model: that request held the server when the user's next question came
        await akari.hear(Message.create(from_="user", message="あかり、好きな星は？", to=["akari"]))
        await asyncio.wait([filling], timeout=5)
        assert filling.cancelled()


async def test_the_events_filled_after_a_line_are_one_request_without_a_repair() -> None:
    # measured (bench/first_word.py, warm greeting after a stop): the repair of an invalid events answer was asked
    # after the idle server's warm-up of the likely next speaker and evicted it from the prompt cache (2.2x the floor)
    model = ScriptedModel("akari")
    model.lane("event_params").add(say("not JSON at all"))  # a small model's answer that cannot be read
    model.add(say("こんばんは！"))
    async with akari_alone(model) as akari:
        greeting = Message.create(from_="user", message="みんな、こんばんは！", to=[])
        await akari.hear(greeting)
        line = await akari.compose(greeting)
        assert line is not None
        filling = akari._events_later
        assert filling is not None
        await asyncio.wait([filling], timeout=5)
        assert len(model.requests_in("event_params")) == 1  # no repair asked (a second one would be unscripted)
        assert akari._params_for_next is None  # the card's defaults guide the next line
        model.assert_used_up()
