"""The Companion API conversation control uses: vote, compose (plan without speaking), say."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.companion.cast import build_cast
from companions.companion.companion import TURN_MAX_TOKENS, Companion, line_tokens
from companions.companion.participant import CompanionParticipant
from companions.conversation import TurnContext
from companions.llm.scripted import ScriptedModel, Step, asks_json, call, reply_json, say
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message
from companions.wire.query_broker import QueryBroker
from tests.companions.memory_doubles import MemoryStoreDouble
from tests.companions.query_doubles import Voice


@pytest.fixture
async def env() -> AsyncIterator[tuple[InProcessBus, QueryBroker, Voice, list[Message]]]:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    voice = Voice(duration=0.1)
    broker.register(voice)
    published: list[Message] = []
    bus.subscribe("messages", lambda m: published.append(m) if isinstance(m, Message) else None, name="test")
    yield bus, broker, voice, published
    await broker.aclose()
    await bus.aclose()


def souta(bus: InProcessBus, broker: QueryBroker, model: ScriptedModel, language: str = "ja") -> Companion:
    card = load_cards([sample_cards_dir()]).by_id()["souta"]
    return Companion(card, model, bus=bus, queries=broker, language=language)


QUESTION = Message.create(from_="user", message="颯太さん、この地図はいつのもの？", to=["souta"])
EVENTS = {"need_response": True, "needs_facts": False}


def souta_model(*turns: Step) -> ScriptedModel:
    """Souta's scripted model for ``turns`` composing turns: each fills the card's events first, then says its line."""
    model = ScriptedModel("souta")
    model.lane("event_params").add(*(reply_json(EVENTS) for _ in turns))
    model.add(*turns)
    return model


async def test_vote_is_structured_and_a_garbled_vote_is_listen(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = ScriptedModel("souta")
    model.lane("vote").add(
        reply_json({"state": "speak", "importance": 8, "closing": "none", "reason": "asked about maps"}),
        say("I think I want to talk"), say("still not JSON"),
    )
    companion = souta(bus, broker, model)
    await companion.hear(QUESTION)
    turn = TurnContext(turn_id=QUESTION.params.id, message=QUESTION, history=(QUESTION,), present=("souta",),
                       user_id="user", addressed_directly=True, closing_hint="pre-closing")
    vote = await CompanionParticipant(companion).vote(turn)  # as conversation control counts it
    assert vote.state == "speak"
    assert vote.importance == 8
    assert vote.selected, "the message named only souta"
    assert vote.closing == "pre-closing", "a vote is never less closed than the hint"
    assert asks_json("vote")(model.requests[0])
    assert "颯太さん、この地図はいつのもの？" in model.requests[0].messages[1].text
    garbled = await companion.vote(QUESTION)
    assert garbled.state == "listen"
    assert companion.structured_stats.fallbacks == 1
    model.assert_used_up()


async def test_compose_plans_the_speech_without_voicing_or_publishing_it(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, voice, published = env
    model = souta_model(
        call("speak", {"message": "颯太: 江戸後期のものですね。\nユーザー: へえ！", "emotion": "neutral",
                       "to": ["user"]}),
    )  # no request after the planned speech: the turn ends there
    companion = souta(bus, broker, model)
    planned = await companion.compose(QUESTION, "terminal")
    await bus.drain()
    assert planned is not None
    assert planned.text == "江戸後期のものですね。"
    assert planned.to == ("user",)
    assert voice.said == []
    assert published == []
    guidance = model.requests_in("")[0].messages[-1].text
    assert "簡潔に返信する。" in guidance
    assert "お別れ" in guidance, "the closing stage reaches the prompt"
    # Saying it afterwards voices exactly the message conversation control published.
    message = Message.create(from_="souta", message=planned.text, to=list(planned.to), emotion="neutral")
    result = await companion.say(message)
    assert result.success
    assert voice.said[0].params.body == {"message": "江戸後期のものですね。", "emotion": "neutral",
                                             "voice": "ja;rate=160;half_tone=-7;all_pass=0.61"}
    model.assert_used_up()


async def test_compose_falls_back_to_plain_text_from_a_model_that_ignores_tools(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, voice, _ = env
    model = souta_model(say("Souta: Probably late Edo.\nAkari: Wow!"))
    companion = souta(bus, broker, model, language="en")
    companion.roster = lambda: [CompanionMetadata(id="akari", name="Akari"), companion.metadata]
    planned = await companion.compose(Message.create(from_="user", message="Souta, how old is this map?",
                                                     to=["souta"]))
    assert planned is not None
    assert planned.text == "Probably late Edo."
    assert voice.said == []
    model.assert_used_up()


class Stall:
    """A search that holds its caller's turn until ``release`` is set (``started`` once it is held)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def search(self, query: str) -> str:
        self.started.set()
        await self.release.wait()
        return "Maps of that kind were printed in the late Edo period."


async def test_a_turn_taken_while_a_line_is_composed_keeps_its_own_budget_and_speaks_aloud(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    """Two turns of one companion at once: a line composed (planned, with the line's token bound and its stream
    checks) and a turn taken meanwhile (voiced and published, with the turn's bound): neither gets the other's."""
    bus, broker, voice, published = env
    model = ScriptedModel("souta")
    model.lane("event_params").add(reply_json(EVENTS), reply_json(EVENTS))  # the line's, the turn's
    model.add(call("search", {"query": "map"}), call("speak", {"message": "Hello, everyone."}), say(""),
              call("speak", {"message": "Probably late Edo."}))
    search = Stall()
    companion = Companion(load_cards([sample_cards_dir()]).by_id()["souta"], model, bus=bus, queries=broker,
                          language="en", search_engine=search)
    question = Message.create(from_="user", message="Souta, how old is this map?", to=["souta"])
    composing = asyncio.create_task(companion.compose(question))
    await asyncio.wait_for(search.started.wait(), 5)  # the line's turn is in its search
    greeting = Message.create(from_="user", message="Hello!", to=["souta"])
    taken = await asyncio.wait_for(companion.take_turn(greeting), 5)
    search.release.set()
    planned = await asyncio.wait_for(composing, 5)
    await bus.drain()

    assert taken.status == "finished"
    assert voice.messages() == ["Hello, everyone."], "the turn taken meanwhile spoke aloud; the line did not"
    assert [m.params.message for m in published] == ["Hello, everyone."]
    assert planned is not None
    assert planned.text == "Probably late Edo."
    line, turn, _, line_again = model.requests_in("")
    assert turn.max_tokens == TURN_MAX_TOKENS
    assert line.max_tokens == line_again.max_tokens == line_tokens(companion.line_rules.limit("en"), "en", tools=True)
    model.assert_used_up()


async def test_cancelling_compose_leaves_speaking_aloud_as_it_was(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, voice, _ = env
    model = ScriptedModel("souta")
    model.lane("event_params").add(reply_json(EVENTS), reply_json(EVENTS))
    model.add(call("search", {"query": "map"}), call("speak", {"message": "Hello."}), say(""))
    search = Stall()
    companion = Companion(load_cards([sample_cards_dir()]).by_id()["souta"], model, bus=bus, queries=broker,
                          search_engine=search)
    task = asyncio.create_task(companion.compose(QUESTION))
    await asyncio.wait_for(search.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await companion.take_turn(Message.create(from_="user", message="Hello!", to=["souta"]))
    assert voice.messages() == ["Hello."]
    model.assert_used_up()


async def test_the_cast_loads_samples_and_user_cards_and_remembers_across_restarts(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]], tmp_path: Path,
) -> None:
    bus, broker, _, _ = env
    user_cards = tmp_path / "cards"
    user_cards.mkdir()
    (user_cards / "broken.yaml").write_text("metadata: {id: x, name: X}\nrole: r\nactions: [teleport]\n")
    memory = MemoryStoreDouble()  # kept across the two casts: a restart that remembers
    models: dict[str, ScriptedModel] = {}

    def make_model(card: CompanionCard) -> ScriptedModel:
        return models.setdefault(card.id, ScriptedModel(card.id))

    cast = build_cast([sample_cards_dir(), user_cards], make_model, bus=bus, queries=broker, language="en",
                      store=memory)
    assert sorted(c.id for c in cast) == ["akari", "hina", "souta"]
    assert [(p.file.name, p.field) for p in cast.problems] == [("broken.yaml", "actions.0")]
    assert sorted(m.name for m in cast.roster()) == ["Akari", "Hina", "Souta"]
    await cast.start()
    bus.publish(Message.create(from_="user", message="Good morning, everyone"))
    bus.publish(Message.create(from_="akari", message="Morning!", to=["user"]))
    await bus.drain()
    await cast.stop()

    again = build_cast([sample_cards_dir()], make_model, bus=bus, queries=broker, language="en", store=memory)
    await again.start()
    hina, akari = again.companions["hina"], again.companions["akari"]
    assert [e.text for e in hina.memory.entries] == ["Good morning, everyone"]
    assert [(e.role, e.text) for e in akari.memory.entries] == [("heard", "Good morning, everyone"),
                                                                ("said", "Morning!")]
    assert "Akari (id: akari)" in hina.context()[0].text, "the system prompt names who is present"
    await again.stop()


async def test_a_vote_fills_the_event_parameters_so_the_speaker_needs_no_events_request(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = ScriptedModel("souta")
    model.lane("vote").add(reply_json({"state": "speak", "importance": 7, "reason": "x" * 500,
                                       "params": {"need_response": True, "needs_facts": False}}))
    model.add(call("speak", {"message": "江戸後期のものですね。"}))  # the turn ends once the line is planned
    companion = souta(bus, broker, model)
    await companion.hear(QUESTION)
    vote = await companion.vote(QUESTION)
    assert len(vote.reason) <= 80, "a small model's rambling reason is cut, not a failed vote"
    planned = await companion.compose(QUESTION)
    assert planned is not None
    assert planned.text == "江戸後期のものですね。"
    assert model.requests_in("event_params") == []
    assert "簡潔に返信する。" in model.requests_in("")[0].messages[-1].text
    model.assert_used_up()


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        ('<tool_call>\n{"name": "speak", "arguments": {"message": "Late Edo, I think.", "emotion": "happy"}}\n'
         "</tool_call>", "Late Edo, I think."),
        ('functions.speak:\n{"message": "Late Edo, I think."}', "Late Edo, I think."),
        ("Souta (id: souta): Late Edo, I think.", "Late Edo, I think."),
        ('<tools>{"type": "function", "function": {"name": "speak", "parameters": {}}}</tools>\nLate Edo, I think.',
         "Late Edo, I think."),
    ],
)
async def test_tool_syntax_json_and_name_prefixes_never_reach_a_line(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]], reply: str, line: str,
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say(reply))
    companion = souta(bus, broker, model, language="en")
    question = Message.create(from_="user", message="Souta, how old is this map?", to=["souta"])
    planned = await companion.compose(question)
    assert planned is not None
    assert planned.text == line
    assert "in English" in model.requests_in("")[0].messages[0].text, "the language of the question"
    model.assert_used_up()


async def test_a_line_that_repeats_the_previous_one_is_asked_again_then_replaced(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say("Maps of Kyoto are my favourite."), say("Maps of Kyoto are my favourite!"))
    companion = souta(bus, broker, model, language="en")
    companion.roster = lambda: [CompanionMetadata(id="akari", name="Akari"), companion.metadata]
    said = Message.create(from_="akari", message="Maps of Kyoto are my favourite.", to=[])
    await companion.hear(said)
    planned = await companion.compose(said)
    assert planned is not None
    assert planned.text not in ("Maps of Kyoto are my favourite.", "Maps of Kyoto are my favourite!")
    assert planned.text  # a short fallback instead of the same words
    retry = model.requests_in("")[1].messages[-1].text
    assert "Do not repeat" in retry
    model.assert_used_up()


async def test_another_companions_line_of_an_earlier_talk_said_back_whole_is_asked_again(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    """Measured over 30 lines on the 0.5B model: Hina said Souta's line of the talk before, word for word, through
    ``speak`` (the whole line was checked without the other companions' lines)."""
    bus, broker, _, _ = env
    akari_said = "Maps of Kyoto show the old streets so well."
    model = souta_model(say(akari_said), say("I like the hand-drawn ones best."))
    companion = souta(bus, broker, model, language="en")
    companion.roster = lambda: [CompanionMetadata(id="akari", name="Akari"), companion.metadata]
    await companion.hear(Message.create(from_="akari", message=akari_said, to=[]))
    question = Message.create(from_="user", message="Souta, which maps do you like?", to=["souta"])
    await companion.hear(question)  # a new talk: Akari's line is no recent one
    planned = await companion.compose(question)
    assert planned is not None
    assert planned.text == "I like the hand-drawn ones best."
    model.assert_used_up()


async def test_the_users_message_of_an_earlier_talk_said_back_as_a_line_is_asked_again(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    """Measured over 30 lines on the 0.5B model: Hina's line, answering "Hello everyone, how are you today?", was
    the user's question of the talk before, "Hina, can you recommend a tea for a cold evening?"."""
    bus, broker, _, _ = env
    earlier = "Souta, which maps of Kyoto do you like best?"
    model = ScriptedModel("souta")  # a message to everyone: the card's events are not asked
    model.add(say(earlier), say("I'm well, thank you. And you?"))
    companion = souta(bus, broker, model, language="en")
    await companion.hear(Message.create(from_="user", message=earlier, to=["souta"]))
    await companion.hear(Message.create(from_="souta", message="The hand-drawn ones.", to=[]))
    greeting = Message.create(from_="user", message="Hello everyone, how are you today?", to=[])
    await companion.hear(greeting)
    planned = await companion.compose(greeting)
    assert planned is not None
    assert planned.text == "I'm well, thank you. And you?"
    model.assert_used_up()


async def test_instructions_a_small_model_copies_into_its_line_are_left_out(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    copied = "こんにちは！地図の話だね。\n\n日本語で答えてください。\n(Instruction) # あなたの紹介をする"
    model = souta_model(say(copied))
    companion = souta(bus, broker, model)
    planned = await companion.compose(QUESTION)
    assert planned is not None
    assert planned.text == "こんにちは！地図の話だね。"
    model.assert_used_up()


async def test_a_line_that_parrots_the_question_is_asked_again(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say("Souta, what do you like to do on weekends?"), say("I like walking around old map shops."))
    question = Message.create(from_="user", message="Souta, what do you like to do on weekends?", to=["souta"])
    companion = souta(bus, broker, model, language="en")
    await companion.hear(question)
    planned = await companion.compose(question)
    assert planned is not None
    assert planned.text == "I like walking around old map shops."
    model.assert_used_up()
    # A line that repeats the question before answering it keeps its answer.
    model.lane("event_params").add(reply_json({"need_response": True, "needs_facts": False}))
    model.add(say("Souta, what do you like to do on weekends? Reading, mostly."))
    planned = await companion.compose(question)
    assert planned is not None
    assert planned.text == "Reading, mostly."
    model.assert_used_up()


def test_instruction_headings_a_model_writes_back_are_not_a_line() -> None:
    from companions.companion.composing import strip_echoed

    assert strip_echoed("こんにちは！私はあかり。\n**あなたのセリフ:**\nこのターンの指示を教えてください。", []) \
        == "こんにちは！私はあかり。"
    assert strip_echoed("このターンの指示", []) == ""
    # a mark or heading within a line ends the line there (measured on the real model)
    assert strip_echoed("今日は、こんばんです。(Instruction) # このターンの指示", []) == "今日は、こんばんです。"
    assert strip_echoed("Hello! (Instructions) Reply in English.", []) == "Hello!"
    # a copy of an instruction with a word changed, behind a list mark (measured on the real model)
    # a heading anywhere in a line, and a form filled in (measured on the real model)
    form = "私の名前: あかり\nこんにちは、世界！\nまた、このターンの指示を教えていただけますか？"
    assert strip_echoed(form, []) == "こんにちは、世界！"
    copied = "こんにちは！\n- 自己のセリフだけを69文字以内で。"
    assert strip_echoed(copied, ["自分のセリフだけを69文字以内で。"]) == "こんにちは！"
    assert strip_echoed("Your line is nice, I like it.", []) == "Your line is nice, I like it."


async def test_a_line_that_speaks_as_another_companion_is_asked_again_as_itself(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    # (a line that begins as another: nothing of it was shown, so it is asked again; see test_line_checks.py)
    model = souta_model(say("私の名前はあかりです。こんばんは！"), say("こんばんは！地図を見ていたところだよ。"))
    companion = souta(bus, broker, model)
    companion.roster = lambda: [CompanionMetadata(id="akari", name="あかり"), companion.metadata]
    planned = await companion.compose(QUESTION)
    assert planned is not None
    assert planned.text == "こんばんは！地図を見ていたところだよ。"
    retry = model.requests_in("")[1].messages[-1].text
    assert "颯太として" in retry  # asked again as itself, by its own name
    model.assert_used_up()


async def test_a_line_in_the_wrong_language_is_asked_again_in_the_right_one(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say("週末は地図を見ているよ。"), say("I look at old maps."))
    question = Message.create(from_="user", message="Souta, what do you like to do on weekends?", to=["souta"])
    companion = souta(bus, broker, model)
    planned = await companion.compose(question)
    assert planned is not None
    assert planned.text == "I look at old maps."
    assert "English only" in model.requests_in("")[1].messages[-1].text
    model.assert_used_up()


async def test_a_line_written_only_for_others_is_asked_again_as_the_companion_itself(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say("あかり: わあ、すごいね！"), say("江戸後期の地図だと思うよ。"))
    companion = souta(bus, broker, model)
    companion.roster = lambda: [CompanionMetadata(id="akari", name="あかり"), companion.metadata]
    planned = await companion.compose(QUESTION)
    assert planned is not None
    assert planned.text == "江戸後期の地図だと思うよ。"  # the named companion answers instead of passing the floor on
    model.assert_used_up()


def test_a_list_mark_opening_a_line_is_not_said() -> None:
    from companions.companion.composing import line_of

    line = line_of(None, "- I'm doing some research on old maps.", [], lambda text: text)
    assert line is not None
    assert line.text == "I'm doing some research on old maps."


async def test_two_fallback_lines_in_a_row_are_worded_differently() -> None:
    from companions.companion.composing import LineCheck, compose_line
    from companions.tools.builtins import PlannedSpeech

    async def always(notes: list[str]) -> PlannedSpeech | None:
        return PlannedSpeech("Yes, I see.", (), "neutral")

    line = await compose_line(always, check=LineCheck("en", ["Yes, I see."]), max_chars=120)
    assert line is not None
    assert line.text not in ("", "Yes, I see.")


async def test_a_fallback_is_not_the_line_it_answers_even_before_that_line_is_remembered() -> None:
    from companions.companion.composing import LineCheck, compose_line
    from companions.tools.builtins import PlannedSpeech

    async def in_japanese(notes: list[str]) -> PlannedSpeech | None:
        return PlannedSpeech("うん、そうだね。", (), "neutral")  # the wrong language twice: a fallback follows

    # measured: Hina's fallback 'Yes, I see.' right after Akari's 'Yes, I see.', which Hina's memory did not hold yet
    line = await compose_line(in_japanese, check=LineCheck("en", answered="Yes, I see."), max_chars=120)
    assert line is not None
    assert line.text not in ("", "Yes, I see.")


async def test_a_message_in_english_gets_the_whole_prompt_in_english(
    env: tuple[InProcessBus, QueryBroker, Voice, list[Message]],
) -> None:
    bus, broker, _, _ = env
    model = souta_model(say("I look at old maps."))
    companion = souta(bus, broker, model)  # a Japanese companion (the app's language)
    question = Message.create(from_="user", message="Souta, what do you like to do on weekends?", to=["souta"])
    planned = await companion.compose(question)
    assert planned is not None
    system = model.requests_in("")[0].messages[0].text
    # measured: a 0.5B model answers in the language of its persona text, whatever the instructions say
    assert "Librarian of an old public library" in system
    assert "古い図書館の司書" not in system
    model.assert_used_up()


def test_a_line_reciting_the_companions_own_prompt_is_not_said() -> None:
    from companions.companion.composing import strip_prompt_copies

    persona = "性格: 明るく好奇心旺盛。相手の話に素直に驚き、すぐに質問を返す。"
    rule = "あなたの返事がそのままあなたのセリフとして表示され、読み上げられる（speak ツールを使ってもよい）。"
    prompt = f"あなたは「あかり」です。{persona}少しおっちょこちょい。\n{rule}"
    # measured on the real model: the persona recited, and a rule of the prompt read out (cut at the length limit)
    recited = "こんにちは！\n明るく好奇心旺盛。相手の話に素直に驚き、すぐに質問を返す。"
    assert strip_prompt_copies(recited, prompt) == "こんにちは！"
    assert strip_prompt_copies(rule[:36] + "…", prompt) == ""
    fine = "こんにちは！今日は星がきれいだね。"
    assert strip_prompt_copies(fine, prompt) == fine
