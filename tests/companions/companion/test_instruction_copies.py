"""No prompt text in a companion's line, and a stock filler only as the last resort.

A line that copies the prompt's instructions (in any of the prompt's languages, with numbers, punctuation or a few
words changed) is never shown, spoken or remembered: a sentence that is mostly instruction text is removed while it
streams and from the line, and a line that is nothing else is asked for again (reason "prompt"); ordinary lines
pass. Before a stock filler, the line is asked for again with a shorter prompt, then the card's own sample line
stands in when it fits and was not said lately. A weekday followed by another weekday in brackets is a line that
contradicts itself."""

from __future__ import annotations

import functools

import pytest

from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.companion.composing import (
    FillerLine,
    LineCheck,
    clean_piece,
    compose_line,
    instructions_for,
    line_of,
    sample_lines,
    strip_prompt_copies,
)
from companions.companion.lines import (
    INSTRUCTION_SHARE,
    Instructions,
    clean_line,
    contradicts_itself,
    only_a_date,
    sentences_of,
)
from companions.companion.prompts import system_prompt
from companions.companion.speech_stream import CheckedSentences
from companions.tools.builtins import PlannedSpeech


def _card(card_id: str) -> CompanionCard:
    return load_cards([sample_cards_dir()]).by_id()[card_id]


@pytest.fixture(scope="module")
def hina() -> Instructions:
    return instructions_for(_card("hina"))


# Copies seen on the real 0.5B model, and variants: numbers filled or changed, punctuation, the words reordered or
# a few changed, in both of the prompt's languages, whatever the language of the turn.
COPIES = (
    "1〜2文、90文字以内。",  # Hina's whole line, measured
    "1~2文、60文字以内",
    "１〜３文、１２０文字以内です。",
    "日本語で、自分のセリフだけを言う",
    "ひなとして、自分のセリフだけを日本語で言う。",
    "ひなとして、私のセリフだけを日本語で言う。",  # the rule with her own name and a word changed (measured)
    "自分のセリフだけを69文字以内で。",  # measured
    "日本語で答える",  # measured
    "相手の言葉をくり返さず、自分の気持ちや考えを言う。",
    "ほかの人のセリフ、名前のラベル、ト書きは書かない。",
    "直前の発言を繰り返さず、新しいことを短く言って。",
    "会話を締めくくる発言をしてください。",
    "新しい話題は広げないでください。",
    "英語は使いません。",
    "JSON だけを出力してください。",
    "まず気持ちに寄り添う言葉をかける。",  # the card's own event instruction
    "Only your own line, in one or two sentences.",
    "Say only your own line as Hina, in English: one or two sentences, at most 320 characters.",
    "One or two sentences, at most 120 characters.",
    "Do not repeat what the other person said.",
    "No lines for others, no name labels, no narration.",
    "Say a short goodbye and end the conversation.",
    "Reply in English.",
    "Answer in English only.",
    "First acknowledge their feelings kindly.",  # the card's own event instruction, in English
    "おしゃべり",  # Souta's whole line, measured: a word of the system prompt's first sentence
    "I'm curious to see what the other person said.",  # Souta's line, measured: 22 letters of an instruction as is
)

# Ordinary lines, in both languages: the companions' sample lines, lines of the real 0.5B model that passed
# (bench/line_quality.py), and everyday lines that share words with the instructions.
ORDINARY = (
    "今日は日曜日だね。",
    "I like to read.",
    "そうだったんですね。よかったら、温かいお茶でもいかがですか。",
    "えっ、それほんと？ ねえねえ、もっと聞かせて！",
    "それなら、調べてみましょう。……ええ、思った通りです。",
    "I see. Would you like a cup of something warm?",
    "Wait, really? Tell me more!",
    "Let me look that up. ...Yes, as I suspected.",
    "週末は本を読んで過ごすのが好きだよ。",
    "日本語って難しいよね。",
    "英語は苦手なんです。",
    "新しいことを始めたいな。",
    "もっと話してください！",
    "自分の気持ちを言うね。",
    "お茶でも飲みながら話しましょう。",
    "一緒に話そうよ。",
    "この会話、楽しいね！",
    "どんな話題でも大丈夫だよ。",
    "I'd rather listen.",
    "I want to listen.",
    "Goodbye!",
    "Goodbye, everyone!",
    "I speak English and a little Japanese.",
    "Let's talk about something new.",
    "Can you say that again, in English?",
    "I'll keep it short.",
    "That's a good reason.",
    "I like old maps because they show how people saw the world.",
    "Don't repeat yourself, Souta!",
    "ひなとして頑張るね！",
    "ひなです！よろしくね。",
    # lines of the real model that share runs of an instruction with words between them, yet say their own
    "あなたが何を話したいか教えてください。",  # "あなたが次に話したいかを決めてください" in runs of 4, 5 and 5
    "みんなでおしゃべりしています。",  # one run of 10 letters of the system prompt's "…おしゃべりしています"
    "もっと話してもよい？",  # an instruction ends "…で話してもよい": six letters of it, casual
    "それを日本語で言うと？",
    "Your turn! What's your favourite star?",
    "I was searching for my glasses all morning.",
    "It made me realize how important it is to help veterans.",  # LoCoMo: 18 letters of the vote's "importance"
    "ひなが「すごい！きれい！」って言ってたよ。",  # a quote of two sentences, closed
)


@pytest.mark.parametrize("line", COPIES)
def test_a_line_that_copies_the_instructions_is_flawed(hina: Instructions, line: str) -> None:
    assert hina.copied(line)
    language = "ja" if any(ord(ch) > 0x3000 for ch in line) else "en"
    assert LineCheck(language, instructions=hina).flaw(line) == "prompt"


@pytest.mark.parametrize(("line", "copied"), [
    ("矩短あなたの紹介をする。", True),  # the event "短く自己紹介をする。" reworded: Akari's whole line (measured)
    ("では、あなたの感想を言う。", True),  # "カメラで見てから感想を言う。" ending as it ends
    ("じゃあ、自己紹介するね！", False),  # the event's words, said as a line is said
    ("改めて自己紹介をしますね。", False),
    ("見たら正直に感想を言うよ。", False),
])
def test_a_cards_event_instruction_said_with_other_words_before_its_ending_is_prompt_text(line: str,
                                                                                           copied: bool) -> None:
    assert instructions_for(_card("akari")).copied(line) is copied


@pytest.mark.parametrize("line", ORDINARY)
def test_an_ordinary_line_is_not_taken_for_instructions(hina: Instructions, line: str) -> None:
    assert not hina.copied(line)
    language = "ja" if any(ord(ch) > 0x3000 for ch in line) else "en"
    assert LineCheck(language, instructions=hina).flaw(line) is None


def test_every_sentence_of_the_prompts_own_texts_is_caught_and_no_sample_line_is() -> None:
    from companions.companion.composing import stock_instructions
    from companions.companion.lines import INSTRUCTION_MIN_GRAMS, _gram_size, _grams, folded, sentences_of

    instructions = instructions_for()
    judged = [s for text in stock_instructions() for s in sentences_of(text)
              if len(_grams(folded(s), _gram_size(s))) >= INSTRUCTION_MIN_GRAMS]
    assert len(judged) > 60
    assert [s for s in judged if not instructions.copied(s)] == []
    for card in load_cards([sample_cards_dir()]).cards:
        for language in ("ja", "en"):
            for line in sample_lines(card.metadata.sample[language]):  # type: ignore[index]
                assert not instructions.copied(line), line


def test_a_copied_sentence_is_removed_from_the_line_and_the_rest_is_said(hina: Instructions) -> None:
    reply = "こんにちは、ひなです。1〜2文、90文字以内。今日は寒いですね。"
    line = line_of(None, reply, [], lambda text: text, instructions=hina)
    assert line is not None
    assert line.text == "こんにちは、ひなです。今日は寒いですね。"
    english = line_of(None, "Only your own line, in one or two sentences. I love rainy days.", [],
                      lambda text: text, instructions=hina)
    assert english is not None
    assert english.text == "I love rainy days."


def test_a_line_of_nothing_but_instructions_is_kept_whole_to_be_found_flawed(hina: Instructions) -> None:
    line = line_of(None, "1〜2文、90文字以内。", [], lambda text: text, instructions=hina)
    assert line is not None
    assert LineCheck("ja", instructions=hina).flaw(line.text) == "prompt"


def test_a_copied_sentence_is_never_released_while_the_line_streams(hina: Instructions) -> None:
    check = LineCheck("ja", instructions=hina)
    gate = CheckedSentences(clean=lambda text: clean_piece(text, lambda t: t, [], "", hina), flaw=check.flaw)
    shown = gate.feed("1〜2文、90文字以内。") + gate.feed("こんにちは、ひなです。") + gate.flush()
    assert shown == "こんにちは、ひなです。"
    assert gate.released == "こんにちは、ひなです。"
    only = CheckedSentences(clean=lambda text: clean_piece(text, lambda t: t, [], "", hina), flaw=check.flaw)
    assert only.feed("日本語で、自分のセリフだけを言う。") + only.flush() == ""


def _attempts(*lines: str, log: list[str]):  # type: ignore[no-untyped-def]
    """An attempt that gives ``lines`` one after the other, noting in ``log`` which kind of attempt asked."""
    queue = list(lines)

    def make(kind: str):  # type: ignore[no-untyped-def]
        async def attempt(notes: list[str]) -> PlannedSpeech | None:
            log.append(kind)
            return PlannedSpeech(queue.pop(0), (), "neutral")
        return attempt
    return make


async def test_a_copied_line_is_asked_for_again_with_a_shorter_prompt(hina: Instructions) -> None:
    log: list[str] = []
    make = _attempts("1〜2文、90文字以内。", "今日は寒いですね。", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), check=LineCheck("ja", instructions=hina),
                              max_chars=90)
    assert line is not None
    assert line.text == "今日は寒いですね。"
    assert not isinstance(line, FillerLine)
    assert log == ["full", "shorter"]


async def test_the_message_answered_said_back_is_left_out_wherever_it_comes() -> None:
    """Measured on the 0.5B model (the first run's window): Akari answered "ただいま！今日は星がきれいだったよ。" with
    "うん、あかりだよ！ 今日は星がきれいだったよ。", the user's sentence after her own."""
    answered = "ただいま！今日は星がきれいだったよ。"
    reply = "うん、あかりだよ！ 今日は星がきれいだったよ。"
    make = _attempts(reply, log=[])
    line = await compose_line(make("full"), check=LineCheck("ja", answered=answered), max_chars=90)
    assert line is not None
    assert line.text == "うん、あかりだよ！"
    check = LineCheck("ja", answered=answered)
    gate = CheckedSentences(clean=lambda text: text, flaw=check.flaw, echo=check.echoes)
    assert gate.feed(reply) + gate.flush() == "うん、あかりだよ！"  # never shown or voiced while it streams
    # A sentence that makes the line before it the message said back goes, and the line goes on after it
    # (measured on the 0.5B model: Akari's whole first line was "こんにちは！").
    answered, reply = "こんにちは！みんな元気？", "こんにちは！みんな元気ですか？少しでも話すのが楽しいですね。"
    line = await compose_line(_attempts(reply, log=[])("full"), check=LineCheck("ja", answered=answered),
                              max_chars=90)
    assert line is not None
    assert line.text == "こんにちは！少しでも話すのが楽しいですね。"
    kept = "好きな星座はオリオン座だよ！"  # the message's words in a line of its own are no echo
    line = await compose_line(_attempts(kept, log=[])("full"), max_chars=90,
                              check=LineCheck("ja", answered="好きな星座は何？みんなの好きな星座を教えて！"))
    assert line is not None
    assert line.text == kept


async def test_the_cards_sample_line_stands_in_before_a_stock_filler(hina: Instructions) -> None:
    sample = sample_lines("そうだったんですね。よかったら、温かいお茶でもいかがですか。")
    log: list[str] = []
    make = _attempts("1〜2文、90文字以内。", "日本語で、自分のセリフだけを言う", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), check=LineCheck("ja", instructions=hina),
                              max_chars=90, spare_lines=sample)
    assert line is not None
    assert not isinstance(line, FillerLine)
    assert line.text == "そうだったんですね。よかったら、温かいお茶でもいかがですか。"

    # said before: one of its sentences not said lately, then, when every piece of it was said, the stock filler
    make = _attempts("1〜2文、90文字以内。", "1〜2文、90文字以内。", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), max_chars=90, spare_lines=sample,
                              check=LineCheck("ja", instructions=hina, own_before=["そうだったんですね。"]))
    assert line is not None
    assert line.text == "よかったら、温かいお茶でもいかがですか。"
    make = _attempts("1〜2文、90文字以内。", "1〜2文、90文字以内。", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), max_chars=90, spare_lines=sample,
                              check=LineCheck("ja", instructions=hina, own_before=[sample[0]]))
    assert isinstance(line, FillerLine)  # its sentences are pieces of the sample said whole
    assert line.reason == "prompt"


async def test_the_users_message_is_answered_even_when_nothing_of_the_companions_own_came_back() -> None:
    async def nothing(notes: list[str]) -> PlannedSpeech | None:
        return None  # e.g. only a line written for another companion, cleaned away

    sample = sample_lines("そうだったんですね。")
    for answers_user in (False, True):
        line = await compose_line(nothing, check=LineCheck("ja"), max_chars=90, identity_note="あなたはひな。",
                                  spare_lines=sample, answers_user=answers_user)
        assert (line.text if line is not None else None) == ("そうだったんですね。" if answers_user else None)
    line = await compose_line(nothing, check=LineCheck("ja"), max_chars=90, answers_user=True)
    assert isinstance(line, FillerLine)
    assert line.reason == "empty"


async def test_a_sample_line_in_another_language_or_just_said_does_not_stand_in(hina: Instructions) -> None:
    log: list[str] = []
    make = _attempts("1〜2文、90文字以内。", "1〜2文、90文字以内。", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), check=LineCheck("en", instructions=hina),
                              max_chars=90, spare_lines=["そうだったんですね。"])
    assert isinstance(line, FillerLine)
    make = _attempts("Reply in English.", "Reply in English.", log=log)
    line = await compose_line(make("full"), retry=make("shorter"), max_chars=90,
                              check=LineCheck("en", ["I see. Would you like a cup of something warm?"],
                                              instructions=hina),
                              spare_lines=["I see. Would you like a cup of something warm?"])
    assert isinstance(line, FillerLine)
    assert line.reason == "prompt"


@pytest.mark.parametrize(("line", "contradiction"), [
    ("今日は日曜日（月曜）です。", True),  # measured on the 0.5B model
    ("今日は水曜(木)だよ。", True),
    ("It's Sunday (Monday) today.", True),
    ("See you Fri (Sat.)!", True),
    ("今日は日曜日（日曜）です。", False),
    ("土曜日（土）に会おう。", False),
    ("11月28日（土）に会おう。", False),  # a date's weekday
    ("月曜日（祝日）は休みです。", False),
    ("Saturday (Sat) is a good day.", False),
    ("今日は日曜日だね。", False),
])
def test_a_weekday_followed_by_another_in_brackets_contradicts_itself(line: str, contradiction: bool) -> None:
    assert contradicts_itself(line) is contradiction
    language = "en" if line.isascii() else "ja"
    assert (LineCheck(language).flaw(line) == "contradiction") is contradiction


@pytest.mark.parametrize(("line", "date"), [
    ("2026年11月", True),  # measured on the 0.5B model: the recall block's date as Akari's whole line
    ("11月26日（木）", True),
    ("2026/11/26", True),
    ("１０時３０分。", True),
    ("11月26日に会おう。", False),
    ("2026年はいい年だった。", False),
    ("7 days", False),
])
def test_a_line_that_is_only_a_date_is_prompt_text(line: str, date: bool) -> None:
    assert only_a_date(line) is date
    assert (LineCheck("ja").flaw(line) == "prompt") is date


def test_a_date_after_the_line_is_removed_from_it() -> None:
    line = line_of(None, "こんにちは！\n2026年11月28日、", [], lambda text: text)  # measured on the 0.5B model
    assert line is not None
    assert line.text == "こんにちは！"
    gate = CheckedSentences(clean=lambda text: clean_piece(text, lambda t: t, [], ""), flaw=LineCheck("ja").flaw)
    assert gate.feed("こんにちは！\n2026年11月28日、") + gate.flush() == "こんにちは！"


@pytest.mark.parametrize(("reply", "said"), [
    # measured on the 0.5B model: an entry made up in the recall block's words, and the start of the next one
    ('On 28 November 2026, user said: "Wait, really? Tell me more!"\nOn 2', None),
    ("こんにちは！\n2026年11月28日、あなたは「やあ」と言いました。", "こんにちは！"),
    ("- 2026年11月28日、ひなが「お茶どうぞ」と言いました。", None),
    ("Noted on 3 May 2025: likes tea", None),
    # measured on Madoi's runner: entries read out in the block's dates with a colon, or with who and a quote
    ('28 November 2026: "Hello everyone, how are you today?" 28 November 2026: "I see.', None),
    ("2026年11月28日、ahariが「Wait, really?", None),
    ("2026年11月28日、星を見たよ。", "2026年11月28日、星を見たよ。"),
    ("I said on 28 November 2026 that I like maps.", "I said on 28 November 2026 that I like maps."),
    ("On 2 occasions I saw a comet!", "On 2 occasions I saw a comet!"),
    ("2026年に宇宙に行きたいな。", "2026年に宇宙に行きたいな。"),
])
def test_a_line_read_like_an_entry_of_the_recall_block_is_never_said(reply: str, said: str | None) -> None:
    language = "ja" if any(ord(ch) > 0x3000 for ch in reply) else "en"
    line = line_of(None, reply, [], lambda text: text)
    assert line is not None
    if said is None:  # nothing else: kept whole, and found flawed
        assert LineCheck(language).flaw(line.text) == "prompt"
    else:
        assert line.text == said
        assert LineCheck(language).flaw(line.text) is None
    gate = CheckedSentences(clean=lambda text: clean_piece(text, lambda t: t, [], ""), flaw=LineCheck(language).flaw)
    assert (gate.feed(reply) + gate.flush()).strip() == (said or "")  # never shown or voiced while it streams


async def test_a_sample_line_said_before_the_memory_forgot_it_is_not_said_again() -> None:
    from companions.companion.companion import Companion
    from companions.llm.scripted import ScriptedModel, reply_json, say
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    bus = InProcessBus()
    card = _card("souta")
    model = ScriptedModel("souta")
    model.lane("event_params").always(reply_json({"need_response": True, "needs_facts": False}))
    model.add(say("1〜2文、90文字以内。"), say("日本語で、自分のセリフだけを言う。"))
    souta = Companion(card, model, bus=bus, queries=QueryBroker(bus), language="ja", memory_budget_tokens=60)
    samples = card.metadata.sample["ja"].splitlines()  # type: ignore[index]
    assert len(samples) > 1
    assert samples[0] == "それなら、調べてみましょう。……ええ、思った通りです。"
    for sample in samples:
        await souta.hear(Message.create(from_="souta", message=sample, to=[]))
    for i in range(12):
        await souta.hear(Message.create(from_="user", message=f"地図の話をもっと聞かせて。{i}回目だよ。", to=[]))
    assert not set(samples) & {entry.text for entry in souta.memory.entries}  # gone from the memory's budget
    line = await souta.compose(Message.create(from_="user", message="颯太さん、この地図はいつのもの？", to=["souta"]))
    assert isinstance(line, FillerLine)  # every piece of every sample line was said: the stock filler
    assert line.reason == "prompt"
    model.assert_used_up()


def test_every_line_of_a_cards_sample_text_is_a_line_of_its_own() -> None:
    assert sample_lines("えっ、それほんと？\n\n それってどういうこと？ もっと聞かせて！ ") == [
        "えっ、それほんと？", "それってどういうこと？ もっと聞かせて！", "それってどういうこと？", "もっと聞かせて！"]


async def test_once_the_first_sample_line_was_said_the_next_one_stands_in_before_a_stock_filler() -> None:
    """A default companion has several lines of its own to fall back on (measured over 15 real-model lines: each
    card's one sample line was soon said, and then only a stock filler was left)."""
    from companions.companion.companion import Companion
    from companions.llm.scripted import ScriptedModel, reply_json, say
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    bus = InProcessBus()
    card = _card("hina")
    first, second = card.metadata.sample["ja"].splitlines()[:2]  # type: ignore[index]
    model = ScriptedModel("hina")
    model.lane("event_params").always(reply_json({"need_response": True, "user_mood": "neutral"}))
    model.add(say("1〜2文、90文字以内。"), say("日本語で、自分のセリフだけを言う。"))
    hina = Companion(card, model, bus=bus, queries=QueryBroker(bus), language="ja")
    await hina.hear(Message.create(from_="hina", message=first, to=[]))
    line = await hina.compose(Message.create(from_="user", message="今日はちょっと疲れたよ。", to=["hina"]))
    assert line is not None
    assert not isinstance(line, FillerLine)
    assert line.text == second
    model.assert_used_up()


def test_the_prompt_shows_the_first_sample_line_and_the_line_length_follows_the_longest() -> None:
    from companions.companion.lines import LineRules

    card = _card("akari")
    lines = card.metadata.sample["ja"].splitlines()  # type: ignore[index]
    prompt = system_prompt(card, "ja")
    assert lines[0] in prompt
    assert not any(line in prompt for line in lines[1:])
    rules = LineRules.from_samples({"ja": "\n".join(lines), "en": ""})
    assert rules.limit("ja") == max(60, 3 * max(map(len, lines)))


async def test_the_users_question_said_back_after_another_companion_answered_it_is_asked_again() -> None:
    from companions.companion.companion import Companion
    from companions.llm.scripted import ScriptedModel, reply_json, say
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    bus = InProcessBus()
    model = ScriptedModel("akari")
    model.lane("event_params").always(reply_json({"already_replied": True, "need_response": True,
                                                  "wants_to_see": False}))
    question = "週末は何をして過ごすのが好き？"
    model.add(say(question), say("わたしは星を見に行くのが好き！"))  # measured: the user's question said back
    present = (_card("akari").wire_metadata("ja"), _card("hina").wire_metadata("ja"))
    akari = Companion(_card("akari"), model, bus=bus, queries=QueryBroker(bus), language="ja",
                      roster=lambda: present)
    await akari.hear(Message.create(from_="user", message=question, to=[]))
    hina = Message.create(from_="hina", message="わたしはお菓子を焼いて過ごします。", to=[])
    await akari.hear(hina)
    line = await akari.compose(hina)
    assert line is not None
    assert line.text == "わたしは星を見に行くのが好き！"
    model.assert_used_up()


async def test_with_no_model_answering_the_users_message_gets_no_stand_in_line() -> None:
    """A sample line or a filler stands in for a model's unusable answer, never for a model that did not answer:
    with no model a companion would pretend to talk (the conversation ends, the chat says why)."""
    from companions.companion.companion import Companion
    from companions.llm.types import LLMError
    from companions.llm.unavailable import UnavailableModel
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    bus = InProcessBus()
    akari = Companion(_card("akari"), UnavailableModel("No LLM is configured"), bus=bus, queries=QueryBroker(bus),
                      language="ja")
    with pytest.raises(LLMError, match="No LLM is configured"):
        await akari.compose(Message.create(from_="user", message="あかり、聞こえる？", to=["akari"]))


@pytest.mark.parametrize("line", [
    "短くあなたの紹介を日本語で言う。",  # Akari's whole line on the embedded runner (measured): two instructions in one
    "自己紹介を日本語で短く言う。",
    "あなたのセリフを短く言う。",
    "Introduce yourself briefly, in English.",
    "Say your own line briefly in English.",
])
def test_a_sentence_pieced_together_from_several_instructions_is_prompt_text(line: str) -> None:
    akari = instructions_for(_card("akari"))
    assert max(akari.share(s) for s in sentences_of(line)) < INSTRUCTION_SHARE  # in no one instruction
    assert akari.copied(line)
    language = "ja" if any(ord(ch) > 0x3000 for ch in line) else "en"
    assert LineCheck(language, instructions=akari).flaw(line) == "prompt"


@pytest.mark.parametrize("line", [*ORDINARY, "私はあかり、よろしくね！", "日本語で話そう。",
                                  "Introduce me to your friend!", "Say hello to everyone!",
                                  "短くまとめると、楽しかったです。"])
def test_an_ordinary_line_is_not_taken_for_instructions_pieced_together(line: str) -> None:
    assert not instructions_for(_card("akari")).copied(line)


# Lines of the real 0.5B model (bench/line_quality.py, a grammar keeping the line's script: tried, left out): the
# prompt's headings in its own words, the vote's scores, a card's personality read out, an assistant's refusal.
NOT_CONVERSATION = (
    ("(提示)\n(提示)", "prompt"),
    ("(Instuctions)", "prompt"),
    ("あかり (24), ひな (50)", "prompt"),
    ("Ahari (50), ively, hina (70).", "prompt"),
    ("On 28 November 2026, achi", "prompt"),  # the start of a recall entry, cut off
    ("私の性格は明るく好奇心旺盛です。", "prompt"),
    ("Sorry, but I don't understand the request.", "not-itself"),
    ("I'm sorry, but I don't have any background or knowledge about astronomy in mind.", "not-itself"),
    ("Sure, I'd be happy to help you. Please tell me what you like about old maps.", "not-itself"),
    ("申し訳ありませんが、私はアかりとしており、あなたの質問を返すことができません。", "not-itself"),
    ("ご質問をお聞かせください。", "not-itself"),
    ("あなたの質問を教えてください。", "not-itself"),
    # measured over 30 lines on Madoi's runner (the 0.5B model): the prompt's own words, a refusal over its tools,
    # Chinese
    ("今日は、ラベルとして「スインジム」や「オーカイション」などのト書きを書いています。", "prompt"),
    ("私はツールを用いないため、あなたに返信することはできません。", "prompt"),
    ("I can't use any tools, so I will answer in JSON.", "prompt"),
    ("好的き、今日は星がきれいだね。", "language"),
    ("こんにちは！誰でもお気軽に相手と話してみてください。", "not-itself"),
    ("你好！", "language"),
    ("**週末**：「週末は何をして過ごすのが好き？」と言いました。", "prompt"),
    ("Okay, I'm ready to help.", "not-itself"),
    ("あかりさん、私はAIです。", "not-itself"),
    ("I'm sorry, I can't help you with that.", "not-itself"),
    ("I'm just here to help! I'm just a friendly AI, so feel free to ask anything you need.", "not-itself"),
    ("Okay, I'm glad you found the information helpful.", "not-itself"),
    ("こんにちは！お元気ですか？何か問題があればどうぞ。", "not-itself"),
    ("我们一起去看星星吧。", "language"),
    # measured in a sixth 30-line run: the recall block's heading recited with "など" left out, the instructions
    # thanked for, an assistant asking for a question
    ("これらすべての会話で覚えていることによって、ひなの好きな星座は「読者」です。", "prompt"),
    ("Thank you for providing guidance. I will now proceed to the next conversation.", "not-itself"),
    ("いいえ、何かご質問があるようお願い申し上げます。", "not-itself"),
    ("こんにちは！あなたの質問は何ですか？", "not-itself"),
    # measured in a seventh: the guidance heading with its first word changed, assistant talk in new words
    ("そのターンの指示です。", "prompt"),
    ("すみませんが、私は「あかり」の役割をサポートするための情報を提供できません。", "not-itself"),
    ("申し訳ありませんが、彼の役割をサポートするためには、情報を提供します。", "not-itself"),
    ("Great! I understand. Please provide me with the tea name so I can help you find it.", "not-itself"),
    ("あなたの質問を理解するためには、私が話し始めます。", "not-itself"),
    # measured in an eighth: an instruction's ending with other words before it, an assistant's "I don't have"
    ("あかりは、私自身を日本語で言う。", "prompt"),
    ("短くあなたの紹介を日本語で言う。", "prompt"),  # measured earlier, pieced from two instructions
    ("I'm sorry, but I don't have a specific tea that you can recommend for a cold evening.", "not-itself"),
    # measured in a ninth: the turn-taking and a tool's status talked about
    ("Alright, please proceed with the turn.", "not-itself"),
    ("Searching for information.", "not-itself"),
    # measured in a tenth: a plan's steps, a refusal by its abilities
    ("(Step 1) あなたはひなです。", "prompt"),  # its "わあ、すごい！" after it is said
    ("(Step 1) 要求する tea を教えてください。\n(Step 2) その tea を日本語で返します。", "prompt"),
    ("すみません、私の能力では、あなたがどのように言いたいかを明確に記録することはできません。", "not-itself"),
    # measured in an eleventh: a document's "it reads"
    ("とあります。", "prompt"),  # after "…「週末は何をして過ごすのが好き？」" (a sentence of its own)
    ("メモには「駅前で三時」とあります。", "prompt"),
    # measured in a thirteenth: an information provider; a quote never closed
    ("私は、あなたをサポートするための情報提供者であり、質問に応じて適切なアドバイスを提供します。", "not-itself"),
    ("週末は、ひなが「I see.", "prompt"),
    # measured in a twelfth: markdown
    ("**Greetings and Welcome**", "prompt"),
    ("Here's my answer:**", "not-itself"),
    ("## 週末の過ごし方", "prompt"),
    ("The tea for a cold evening is [your choice].", "prompt"),  # measured in a sixteenth 30-line run
)


@pytest.mark.parametrize(("line", "reason"), NOT_CONVERSATION)
def test_a_line_that_is_no_conversation_is_flawed(line: str, reason: str) -> None:
    language = "ja" if any(ord(ch) > 0x3000 for ch in line) else "en"
    assert LineCheck(language, instructions=instructions_for(_card("akari"))).flaw(line) == reason


def test_what_is_no_conversation_is_left_out_of_a_line_and_the_rest_is_said() -> None:
    akari = instructions_for(_card("akari"))
    said = line_of(None, "あかり！こんにちは！私の性格は明るく好奇心旺盛です。また、星を見るのが好き。", [],
                   lambda text: text, instructions=akari)
    assert said is not None
    assert said.text == "あかり！こんにちは！また、星を見るのが好き。"
    scored = line_of(None, "あかり (50), みかん！ねえ、あなたも好きです。\n(提示)", [], lambda text: text,
                     instructions=akari)
    assert scored is not None
    assert scored.text == "ねえ、あなたも好きです。"


def test_the_tools_heading_written_back_is_left_out_of_a_line() -> None:
    said = line_of(None, "こんにちは！あなたの話を聞かせてください。\n(Tools) # これで返信する", [], lambda text: text,
                   instructions=instructions_for(_card("akari")))
    assert said is not None
    assert said.text == "こんにちは！あなたの話を聞かせてください。"
    # measured in a 23rd 30-line run: Akari's whole line (the prompt's first sentence told back, then a tool label)
    assert line_of(None, "あなたは、あかりです。\n（Tool: Speak）", [], lambda text: text,
                   prompt=system_prompt(_card("akari"), "ja"), instructions=instructions_for(_card("akari"))) is None


@pytest.mark.parametrize("line", [
    "週末は野菜と、常連さんの話を聞くのが好き。",  # Hina speaking of what she likes, from her card: her own
    "今日は(たぶん)晴れだよ。",
    "I have two cats (and a dog).",
    "(笑)そうだね、楽しかった！",
    "性格がいいって言われるんだ。",
    "性格は正反対だけど、仲良しだよ。",
    "Could you say that again? I didn't catch it.",
    "I'd be happy to help you with that map, Souta!",
    "当然だよ、一緒に行こう！",  # 当然 is Japanese too
    "このラベル、かわいいね。",  # a label on a jar is no stage direction
    "没頭しちゃうくらい楽しい本だったよ。",
    "[Souta] is my favourite name for a cat.",  # brackets round a word of the line, no blank of a form
])
def test_a_line_with_brackets_or_about_itself_is_conversation(line: str) -> None:
    language = "ja" if any(ord(ch) > 0x3000 for ch in line) else "en"
    assert LineCheck(language, instructions=instructions_for(_card("hina"))).flaw(line) is None


def test_a_chinese_sentence_is_left_out_of_a_japanese_line_and_the_rest_is_said() -> None:
    said = line_of(None, "好的，我们开始吧。ねえ、今夜は星が見えるかな？", [], lambda text: text,
                   instructions=instructions_for(_card("akari")))
    assert said is not None
    assert said.text == "ねえ、今夜は星が見えるかな？"


def test_another_companions_line_said_back_is_a_repeat() -> None:
    hina_said = "週末は野菜と、常連さんの話を聞くのが好き。"
    check = LineCheck("ja", others_before=[hina_said])
    assert check.flaw("週末は野菜と、常連さんの話を聞くのが好き！") == "repeat"
    assert check.flaw("ひなは野菜が好きなんだね。ぼくは本かな。") is None


def test_a_speakers_label_opening_a_line_is_left_out_whoever_it_names() -> None:
    """Measured over 30 lines on the 0.5B model: "Hiな : I see." (Hina's name garbled) as Akari's line."""
    clean = functools.partial(clean_line, own_names=["あかり", "Akari"], other_names=["ひな", "Hina"])
    assert clean("Hiな : I see. How was your day?") == "I see. How was your day?"
    assert clean("Ahari: Hi there! How are you today?") == "Hi there! How are you today?"  # misspelt
    assert clean("Ahかり : 星が見えるかな？") == "星が見えるかな？"  # a letter put in, in two scripts
    assert clean("Time: 3 pm, and Souta is late.") == "Time: 3 pm, and Souta is late."
    assert clean("10:30 に集合ね。") == "10:30 に集合ね。"  # a time is no label
    assert clean("ねえ、今夜は星：見えるかな？") == "ねえ、今夜は星：見えるかな？"


def test_a_sentence_of_another_companions_line_is_not_said_again_but_a_stock_phrase_may_be() -> None:
    check = LineCheck("en", others_before=["I see. Would you like a cup of something warm?"])
    assert check.flaw("Would you like a cup of something warm?") == "repeat"
    assert check.flaw("I see.") is None


def test_the_recall_blocks_heading_read_out_with_a_word_put_in_is_prompt_text() -> None:
    """Measured over 30 lines on the 0.5B model (Souta): the recall block's heading, "だけ" turned into "だけを"."""
    prompt = system_prompt(_card("souta"), "ja") + "\n以前の会話などで覚えていること（必要なときだけ使ってください）:"
    line = "これは2026年11月28日の会話で覚えていること（必要なときだけを使ってください）。"
    assert strip_prompt_copies(line, prompt) == ""
    assert strip_prompt_copies("ねえ、週末は何してたの？", prompt) == "ねえ、週末は何してたの？"


def test_the_persona_told_to_the_listener_as_theirs_is_prompt_text() -> None:
    """Measured over 30 lines on the 0.5B model: Akari's "あなたは、天文部の高校二年生です。" (her story)."""
    prompt = system_prompt(_card("akari"), "ja")
    assert strip_prompt_copies("あなたは、天文部の高校二年生です。", prompt) == ""
    assert strip_prompt_copies("あなたは星が好きなんだね！", prompt) == "あなたは星が好きなんだね！"
    assert strip_prompt_copies("あなたは元気？", prompt) == "あなたは元気？"
    # the prompt's first sentence, "あなたは「あかり」（id: akari）です。", told back (measured in a 23rd 30-line run)
    assert strip_prompt_copies("あなたは、あかりです。\nねえ、星を見に行こう！", prompt) == "ねえ、星を見に行こう！"
    assert strip_prompt_copies("あなたはあかりちゃんが好きなんだね！", prompt) == "あなたはあかりちゃんが好きなんだね！"
    english = system_prompt(_card("souta"), "en")
    line = "You're doing well, thank you! How about reading some old maps?"
    assert strip_prompt_copies(line, english) == line


def test_the_companion_described_in_its_cards_words_for_its_personality_is_prompt_text() -> None:
    """Measured in a fourteenth 30-line run on the 0.5B model: Akari's line ended "私は明るく好奇心旺盛です。"."""
    prompt = system_prompt(_card("akari"), "ja")
    line = "こんにちは！今日は、新しい宇宙飛行士を学び始めました。私は明るく好奇心旺盛です。"
    assert strip_prompt_copies(line, prompt) == "こんにちは！今日は、新しい宇宙飛行士を学び始めました。"
    assert strip_prompt_copies("わたしは、明るく好奇心旺盛！", prompt) == ""
    assert strip_prompt_copies("おはよう！明るく好奇心旺盛だよ！", prompt) == "おはよう！"  # the window's first run
    # in her own words, of someone else, her story: hers to say
    for own_words in ("私、ちょっとおっちょこちょいなんだ。", "私は星が大好きです！",
                      "明るく好奇心旺盛な人っていいよね。", "私は天文部の高校二年生だよ。"):
        assert strip_prompt_copies(own_words, prompt) == own_words
    english = system_prompt(_card("akari"), "en")
    assert strip_prompt_copies("Hi! I'm cheerful and endlessly curious.", english) == "Hi!"
    assert strip_prompt_copies("I'm curious about that!", english) == "I'm curious about that!"
    assert strip_prompt_copies("I react with honest surprise and ask questions back.", english) == ""
    assert strip_prompt_copies("I am a little scatterbrained, sorry!", english) == ""  # the card's words
    assert strip_prompt_copies("I'm a bit scatterbrained, sorry!", english) == "I'm a bit scatterbrained, sorry!"


def test_a_markdown_label_opening_a_line_is_left_out_and_its_words_are_said() -> None:
    """Measured in a fourteenth 30-line run on the 0.5B model: Hina's "Sure!\n**Tea Selection:** In order to …"."""
    clean = functools.partial(clean_line, own_names=["ひな", "Hina"], other_names=["あかり", "Akari"])
    line = "Sure!\n**Tea Selection:** In order to make your evening more enjoyable, I recommend a warm tea."
    assert clean(line) == "Sure!\nIn order to make your evening more enjoyable, I recommend a warm tea."
    assert clean("**Tea**: Try a warm genmaicha.") == "Try a warm genmaicha."
    assert clean("- **Find a tea that is cold**: Try a warm genmaicha.") == "Try a warm genmaicha."  # measured
    assert clean("* **Tea:** Try a warm genmaicha.") == "Try a warm genmaicha."
    assert clean("I **love** tea: it warms you up.") == "I **love** tea: it warms you up."
    assert clean("**Akari**: Hi there!") == ""  # a line for another goes whole
