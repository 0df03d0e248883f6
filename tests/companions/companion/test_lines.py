"""A companion's line: its language, only its own words, not a repeat, within its length."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companions.companion.lines import (
    clean_line,
    detect_language,
    fallback_line,
    is_repeat,
    limit_length,
    misidentified,
    only_a_greeting,
    similarity,
    sounds_like_an_assistant,
)

# The sample companions (resources/companions): names in ja and en, and ids.
AKARI = ("あかり", "Akari", "akari")
OTHERS = ("ひな", "Hina", "hina", "颯太", "Souta", "souta", "User", "ユーザー")


def clean(text: str) -> str:
    return clean_line(text, own_names=AKARI, other_names=OTHERS)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("こんにちは、みんな！", "ja"),
        ("おはよう", "ja"),
        ("東京大学", "ja"),
        ("Hello! こんにちは", "ja"),
        ("あかり、これはPythonのコードです", "ja"),
        ("What are you all talking about?", "en"),
        ("Hi あかり, how are you today?", "en"),
        ("Tell me about ひな", "en"),
        ("ＨＥＬＬＯ ｔｈｅｒｅ", "en"),
        ("ok", "en"),
        ("?", None),
        ("", None),
        ("😊👍", None),
        ("123 456", None),
    ],
)
def test_the_language_of_a_message(text: str, language: str | None) -> None:
    assert detect_language(text) == language


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("あかり (id: akari): こんにちは！", "こんにちは！"),
        ("あかり（id: akari）：こんにちは！", "こんにちは！"),
        ("Akari (akari): Hi everyone!", "Hi everyone!"),
        ("**Akari**: Hello", "Hello"),
        ("**Akari:** Hello", "Hello"),
        ("[akari] やっほー", "やっほー"),
        ("【あかり】星を見に行こう！", "星を見に行こう！"),
        ("あかり「やったー！」", "やったー！"),
        ("あかり：「星がきれい！」", "星がきれい！"),
        ("Akari: Akari (akari): Twice labelled.", "Twice labelled."),
        ("あかりちゃん：ねえねえ！", "ねえねえ！"),
        # its name and a comma opening English (measured in two 30-line runs: "Hina, I see. Would you like…")
        ("Akari, I see. Shall we look at the stars?", "I see. Shall we look at the stars?"),
        ("Hina, I see.", "Hina, I see."),  # another's name: addressed
        ("Akari, hina and I went out.", "Akari, hina and I went out."),  # not a sentence of its own after it
        ("あかり、それ知ってる！", "あかり、それ知ってる！"),  # Japanese: a way of talking
    ],
)
def test_the_companions_own_label_is_removed(text: str, line: str) -> None:
    assert clean(text) == line


@pytest.mark.parametrize(
    "text",
    [
        "ひな (id: hina): そうですね",
        "Hina (hina): I agree!",
        "**Hina**: I agree!",
        "[souta] そうだな",
        "【ひな】うん",
        "颯太（souta）：おう",
        "Hina says: let's go!",
        "ひなは言った：「行こう」",
        "ひな「そうだね！」",
        "User: yes!",
        "- Souta: sure",
    ],
)
def test_a_line_written_for_another_is_dropped(text: str) -> None:
    assert clean(text) == ""


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("ひな「そうだね！」あかりも行きたい！", "あかりも行きたい！"),
        ("そうだね！ ひな: 私も行きたい！", "そうだね！"),
        ("Sounds fun! Hina: me too!", "Sounds fun!"),
        ("Sounds fun!\nHina: I agree.\nUser: yes!\nAkari: Then it's settled.", "Sounds fun!\nThen it's settled."),
        ("えっ、ほんと？（ひなは笑った）もっと聞かせて！", "えっ、ほんと？もっと聞かせて！"),
        ("*Hina smiles* Yes!", "Yes!"),
        ("(Souta nods) Right, let's go.", "Right, let's go."),
        ('"Wait, really? Tell me more!"', "Wait, really? Tell me more!"),
        ("「えっ、それほんと？」", "えっ、それほんと？"),
        ("“Wow.”", "Wow."),
        ("functions.speak:\nあかり: ねえねえ！", "ねえねえ！"),
        ('<tool_call>{"name": "speak", "arguments": {"message": "x"}}</tool_call>Hello!', "Hello!"),
        ('<tools>{"type": "function", "function": {"name": "speak"}}</tools>', ""),
    ],
)
def test_only_the_companions_own_words_remain(text: str, line: str) -> None:
    assert clean(text) == line


@pytest.mark.parametrize(
    "text",
    [
        "Hina, what do you think?",
        "ひな、どう思う？",
        "「星」と「月」、どっちが好き？",
        "Time: 3 pm, and Souta is late.",
        "I asked Hina (she knows) about it.",  # no name is a label, a parenthesis that is not narration
        "Hinata: a warm sunny spot",
    ],
)
def test_names_used_in_a_sentence_are_left_alone(text: str) -> None:
    assert clean(text) == text


def test_similarity_ignores_case_width_punctuation_and_spaces() -> None:
    assert similarity("Wait, really?!", "wait really") == 1.0
    assert similarity("ＨＥＬＬＯ！", "hello") == 1.0
    assert similarity("えっ、それほんと？", "えっ それほんと") == 1.0
    assert similarity("I love the stars.", "Pizza is my favourite food.") < 0.2
    assert similarity("", "") == 1.0
    assert similarity("abc", "") == 0.0


@pytest.mark.parametrize(
    ("line", "previous"),
    [
        ("Wait, really? Tell me more!", ["Wait really, tell me more."]),
        ("えっ、それほんと？もっと聞かせて！", ["えっ、それ本当？もっと聞かせて！"]),
        ("I agree with Hina: the stars are beautiful tonight", ["The stars are beautiful tonight!"]),
        ("ひなが言った通り、今夜は星がとてもきれいだね", ["今夜は星がとてもきれいだね！"]),
        ("the stars are beautiful tonight", ["Look up, everyone: the stars are beautiful tonight, aren't they?"]),
        ("Hello there!", ["Nice weather.", "hello there"]),
    ],
)
def test_a_repeat_is_detected(line: str, previous: list[str]) -> None:
    assert is_repeat(line, previous)


@pytest.mark.parametrize(
    ("line", "previous"),
    [
        ("Yes.", ["No."]),
        ("I'd love to see Saturn's rings someday.", ["The stars are beautiful tonight!"]),
        ("うん、行こう！", ["今夜は星がとてもきれいだね！"]),
        ("Hello!", []),
        ("", ["anything"]),
        ("Really? Tell me about the comet.", ["Really?"]),  # a short earlier line is not quoted by sharing a word
    ],
)
def test_a_new_line_is_not_a_repeat(line: str, previous: list[str]) -> None:
    assert not is_repeat(line, previous)


def test_length_is_cut_at_the_last_sentence_end_that_fits() -> None:
    text = "えっ、それほんと？ねえねえ、もっと聞かせて！" * 8
    two_and_a_bit = "えっ、それほんと？ねえねえ、もっと聞かせて！" * 2 + "えっ、それほんと？"
    assert limit_length(text, max_chars=60) == two_and_a_bit
    assert limit_length("Wow! That is great. I want to go too, right now!", max_chars=25) == "Wow! That is great."
    assert limit_length("「すごい！」ってひなが言ってたよ、本当にすごいんだって", max_chars=10) == "「すごい！」"


def test_without_a_sentence_end_the_cut_is_at_a_word_with_an_ellipsis() -> None:
    assert limit_length("This is a very long sentence without any end that goes on", max_chars=30) == (
        "This is a very long sentence…")
    assert limit_length("The value is 3.5 and it keeps growing beyond all limits", max_chars=20) == (
        "The value is 3.5…")
    assert limit_length("あいうえおかきくけこさしすせそ", max_chars=8) == "あいうえおかき…"


def test_a_short_line_is_left_as_it_is() -> None:
    assert limit_length("  Hello!  ", max_chars=40) == "Hello!"
    assert limit_length("x", max_chars=0) == "x"


def test_fallback_lines_are_short_and_in_the_language() -> None:
    assert fallback_line("ja") == "うん、そうだね。"
    assert fallback_line("en") == "Yes, I see."
    assert detect_language(fallback_line("ja", 1)) == "ja"
    assert detect_language(fallback_line("en", 2)) == "en"
    assert fallback_line("fr") == "Yes, I see."
    assert fallback_line("ja", 0) != fallback_line("ja", 1)


LABELS = [
    "{n}: ", "{n}：", "**{n}**: ", "**{n}:** ", "[{n}] ", "【{n}】", "{n} (id: {i}): ", "{n} ({i}): ", "{n} says: ",
    "- {n}: ",
]
OTHER_IDS = {"ひな": "hina", "Hina": "hina", "颯太": "souta", "Souta": "souta"}
words = st.text(alphabet=st.sampled_from(list("あいうえおかきabc xyz。！？!?,.、")), max_size=30)
garbage = st.sampled_from(['<tool_call>{"name": "speak"}', "</tool_call>", '{"message": "hi"}', "functions.speak:",
                           "<tools>", '{"type": "function"}', ""])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LABELS), st.sampled_from(sorted(OTHER_IDS)), words, garbage, words)
def test_clean_line_never_keeps_tool_syntax_or_another_speakers_label(
    label: str, name: str, before: str, junk: str, after: str
) -> None:
    text = f"{before}\n{label.format(n=name, i=OTHER_IDS[name])}{junk}{after}"
    out = clean(text)
    assert "<tool_call" not in out
    assert '{"' not in out
    assert "functions.speak" not in out
    for other, other_id in OTHER_IDS.items():
        for form in LABELS:
            assert not out.startswith(form.format(n=other, i=other_id).strip())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=1, max_value=120))
def test_limit_length_fits_keeps_a_prefix_and_never_empties(text: str, max_chars: int) -> None:
    out = limit_length(text, max_chars=max_chars)
    assert len(out) <= max_chars
    assert text.strip().startswith(out.removesuffix("…").rstrip())
    if text.strip():
        assert out


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_similarity_is_symmetric_bounded_and_a_line_repeats_itself(a: str, b: str) -> None:
    assert similarity(a, b) == similarity(b, a)
    assert 0.0 <= similarity(a, b) <= 1.0
    if similarity(a, "") == 0.0:  # a has letters or digits
        assert is_repeat(a, [b, a])


def test_a_line_that_speaks_as_another_companion_or_leaks_ids_is_recognised() -> None:
    others = ["ひな", "hina", "颯太", "souta"]
    for bad in ("私の名前はひなです。", "こんにちは！私はひな、よろしくね", "Hi! I'm Souta.", "my name is hina",
                "私は、ひな と souta の間にいます。", "あなたの id: akari と一緒にいる相手"):
        assert misidentified(bad, other_names=others), bad
    assert misidentified("こんにちは、Hina！Soutaです。", other_names=others)  # measured: Akari introducing Souta
    assert misidentified("こんにちは！私のIDは、Akariです。", other_names=others)  # measured: the prompt's ids
    assert misidentified("My ID is souta.", other_names=others)
    for fine in ("ひなちゃん、こんばんは！", "私はひなと一緒に星を見たい。", "私はひなよりも早起きだよ。",
                 "I'm with Souta on this one.", "I'm Hina's friend, nice to meet you.", "Souta, is that right?",
                 "私はあかりです！"):
        assert not misidentified(fine, other_names=others), fine


def test_a_line_that_greets_its_own_speaker_is_recognised() -> None:
    own = ["あかり", "Akari"]
    for bad in ("Hi, Akari! How are you today?", "hello akari.", "こんにちは、あかりちゃん！今日は何してたの？",
                "こんばんは あかり。"):
        assert misidentified(bad, other_names=[], own_names=own), bad  # measured: "Hi, Akari! …" from Akari
    assert misidentified("Welcome, Akari!", other_names=[], own_names=own)  # measured from Akari
    assert misidentified("あかりさん、昨日は天気が温かいですね。", other_names=[], own_names=own)  # measured
    for fine in ("やっほー、あかりだよ！", "Hi, Akari here!", "こんにちは！あかりです。", "Hi everyone!",
                 "あかり、がんばるね！", "Hi, Hina!"):
        assert not misidentified(fine, other_names=[], own_names=own), fine


def test_assistant_boilerplate_from_a_small_model_is_recognised() -> None:
    for bad in ("I'm sorry, but I can't assist with that request.", "As an AI, I don't have weekends.",
                "申し訳ありませんが、お手伝いできません。", "私はAIアシスタントです。",
                "You are very welcome! I'm glad I could help you. How can I assist you today?",
                "すみませんが、その指示を達成できません。",  # measured, as the next two
                "私は様々な言葉を用いて、あなたの質問を答えることができます。",
                "I'm sorry, I cannot follow these instructions.",
                "すみませんが、あなたは何か特定の指示を提供しているか？",
                "こんにちは！私は、料理や芸術の人気を学ぶための言語モデルです。",  # measured, as the next two
                "何か特定の情報が必要であれば、詳細を教えていただけますか？",
                "If you don't know how to do it, let me know and I'll help you with that.",
                "私はあなたに話を促すのに役立つツールです。",  # measured, as the next
                "ごめん。申し訳ありませんが、何を返すのか教えてください。", "I'm a helpful tool for chatting.",
                "すみませんが、私は「颯太」の性格と背景に合わせたローグローレッチャーなので、あなたがおしゃべりをする"
                "内容を提供することはできません。"):
        assert sounds_like_an_assistant(bad), bad
    for fine in ("I'm sorry to hear that! Shall we look at the stars?", "I can't wait for the weekend!",
                 "I'm sorry, but I don't have time today. Tomorrow?",
                 "ごめんね、今日は行けないんだ。", "先生の指示で星座を観察したよ。", "質問に答えてくれてありがとう！",
                 "I followed the recipe's instructions to the letter.", "Let me know how it goes!",
                 "モデルの話をしよう。", "この道具、便利なツールだね！", "何を返すか迷っちゃう、お土産の話？",
                 "I'm a tool collector, you know."):
        assert not sounds_like_an_assistant(fine), fine


@pytest.mark.parametrize("text", ["あかり", "「あかり」", "Akari.", "ひな！", "  Souta  ", "Akkari,"])
def test_a_name_alone_is_no_line(text: str) -> None:
    # measured on a 0.5B model: "あかり" was Akari's whole answer to "みんな、こんばんは！"
    assert clean_line(text, own_names=["あかり", "Akari", "akari"], other_names=["ひな", "Souta"]) == ""
    assert clean_line("あかりだよ！", own_names=["あかり"], other_names=[]) == "あかりだよ！"


def test_a_letters_salutation_opening_a_line_is_left_out() -> None:
    # measured over 30 lines on the 0.5B model: "Akkari,\nThank you for sharing that. …" from Hina
    said = "Thank you for sharing that. How about a tea that's nice and refreshing?"
    assert clean_line(f"Akkari,\n{said}", own_names=["ひな", "Hina"], other_names=["あかり", "Akari"]) == said
    assert clean_line(f"Ahaki,\n{said}", own_names=["あかり", "Akari"], other_names=["ひな", "Hina"]) == said
    assert clean_line("そうだね、\nいいと思う。", own_names=["あかり"], other_names=[]) == "そうだね、\nいいと思う。"
    assert clean_line("Akkarin", own_names=["ひな"], other_names=["Akari"]) == "Akkarin"  # two letters off


def test_a_line_made_of_the_words_it_answers_is_parroting_but_a_greeting_back_is_not() -> None:
    from companions.companion.composing import LineCheck

    check = LineCheck("ja", answered="今日はちょっと疲れたな。")
    assert check.flaw("今日は疲れたな。") == "parrot"  # measured on a 0.5B model
    assert check.flaw("おつかれさま！ゆっくり休んでね。") is None
    greeting = LineCheck("ja", answered="みんな、こんばんは！今日も寒いね。")
    assert greeting.flaw("こんばんは！") is None
    weekend = LineCheck("ja", answered="週末は何をして過ごすのが好き？")
    assert weekend.flaw("週末は本を読んで過ごすのが好きだよ。") is None


def test_a_label_with_nothing_after_it_is_no_line() -> None:
    assert clean_line("読者本：", own_names=["あかり"], other_names=[]) == ""  # measured on a 0.5B model
    assert clean_line("おすすめ：星の王子さま！", own_names=["あかり"], other_names=[]) == "おすすめ：星の王子さま！"


def test_the_role_recited_with_its_verb_changed_is_left_out() -> None:
    from companions.companion.composing import strip_prompt_copies

    prompt = "役割: 会話を明るく盛り上げ、ユーザーや他のコンパニオンに積極的に話を振る。"
    recital = "あなたの仕事は会話を明るく盛り上げ、ユーザーや他のコンパニオンに積極的に話す。"  # measured
    assert strip_prompt_copies(recital, prompt) == ""
    assert strip_prompt_copies("会話って楽しいね！", prompt) == "会話って楽しいね！"
    english = "Role: Keep the conversation lively and pass the ball to the user and the other companions."
    assert strip_prompt_copies("I love keeping the conversation lively!", english) == (
        "I love keeping the conversation lively!")


def test_short_pieces_of_the_persona_read_out_are_no_line_but_the_sample_lines_words_are_the_companions_own() -> None:
    from companions.cards.card import load_cards, sample_cards_dir
    from companions.companion.composing import line_of
    from companions.companion.prompts import system_prompt

    prompt = system_prompt(load_cards([sample_cards_dir()]).by_id()["akari"], "ja")

    def said(text: str) -> str | None:
        line = line_of(None, text, (), lambda t: t, prompt=prompt)
        return line.text if line is not None else None

    assert said("明るく好奇心旺盛\n少しおっちょこちょい") is None  # measured on the 0.5B model: her personality
    assert said("こんにちは！\n天文部の高校二年生") == "こんにちは！"
    assert said("もっと聞かせて！") == "もっと聞かせて！"  # from her sample line: her own voice
    assert said("夜空って、きれいだよね！") == "夜空って、きれいだよね！"
    assert said("こんにちは") == "こんにちは"
    english = system_prompt(load_cards([sample_cards_dir()]).by_id()["souta"], "en")
    souta = line_of(None, "Let me look that up. ...Yes, as I suspected.", (), lambda t: t, prompt=english)
    assert souta is not None  # measured on the 0.5B model: his sample line, left out as a copy of the prompt
    assert souta.text == "Let me look that up. ...Yes, as I suspected."


@pytest.mark.parametrize(("answered", "line", "flaw"), [
    # first-minute lines of the real 0.5B model that had passed the checks; the first was voiced early, then replaced
    ("こんにちは！今日はみんな元気ですか。", "こんにちは！今日はみんな元気ですか。", "parrot"),
    ("こんにちは！今日はみんな元気ですか。", "こんにちは！今日はみんな元気？", "parrot"),
    ("こんにちは！今日はみんな元気ですか。", "こんにちは！私はHinaさんです。", "not-itself"),  # Akari as Hina
    ("こんにちは！今日はみんな元気ですか。", "こんにちは！私の名前はHinaです。", "not-itself"),
    ("こんにちは！今日はみんな元気ですか。", "こんにちは！元気だよ、ありがとう。", None),
    # lines of the real 0.5B model after that (bench/first_word.py --real): no words at all, and the greeting told
    # back as reported speech
    ("みんな、こんばんは！", "(", "empty"),
    ("みんな、こんばんは！", "……！", "empty"),
    ("みんな、こんばんは！", "あかりとして、あなたが「みんな、こんばんは！」と言いました。", "parrot"),
    ("みんな、こんばんは！", "「こんばんは」って、いい響きだね。", None),  # a word quoted is no report
    ("こんばんは", "「こんばんは」だって！うれしいな。", None),  # a greeting of five letters is never judged
    # bench/line_quality.py on the real 0.5B model, 30 lines (these had passed)
    ("みんな、こんにちは！", "こんにちは！こんにちは！こんにちは！こんにちは！", "repeat"),
    ("みんな、こんにちは！", "私はあなたです。あなたの質問が何でもお答えします。", "not-itself"),
    ("みんな、こんにちは！", "はい！はい！わかった！", None),  # a short word said twice is no repeated sentence
])
def test_the_first_minutes_lines_that_passed_the_checks_are_caught(answered: str, line: str,
                                                                    flaw: str | None) -> None:
    from companions.companion.composing import LineCheck

    check = LineCheck("ja", answered=answered,
                      speaks_as_other=lambda text: misidentified(text, other_names=["ひな", "Hina", "hina"]))
    assert check.flaw(line) == flaw


def test_an_english_question_answered_with_one_kanji_or_as_an_assistant_is_caught() -> None:
    from companions.companion.composing import LineCheck

    check = LineCheck("en", answered="Hina, what do you like to do on weekends?")
    assert check.flaw("少") == "language"  # measured: Hina's whole answer
    assert check.flaw("It sounds like you're working on a conversation. Let me know if there's anything else I can "
                      "assist with today.") == "not-itself"
    assert check.flaw("Mr. Smith said hi. Mr. Smith left.") is None
    assert check.flaw("I like reading, especially old poems.") is None


def test_a_name_with_an_honorific_is_still_a_claim_to_be_someone_else() -> None:
    others = ["ひな", "Hina"]
    assert misidentified("こんにちは！私はHinaさんです。", other_names=others)
    assert misidentified("私はひなちゃんです！", other_names=others)
    assert not misidentified("ひなさん、こんにちは！", other_names=others)
    assert not misidentified("私はひなさんが好きです。", other_names=others)


def test_a_name_claimed_with_a_particle_slipped_in_is_still_a_claim() -> None:
    others = ["ひな", "Hina"]
    assert misidentified("こんにちは！私はひながです。あなたの質問は何ですか？", other_names=others)  # measured, Akari
    assert not misidentified("私はひなが好きです。", other_names=others)
    assert not misidentified("私はひながいいと思う。", other_names=others)
    assert misidentified("(Step 2) 我がひなです。", other_names=others)  # measured, Souta


def test_an_instruction_said_back_in_other_words_is_left_out() -> None:
    from companions.companion.composing import strip_echoed

    notes = ["日本語で答えてください。", "自分のセリフだけを69文字以内で。"]
    assert strip_echoed("日本語で答える", notes) == ""  # measured: Souta's whole answer to "おすすめの本はある？"
    assert strip_echoed("日本語の本がおすすめだよ！", notes) == "日本語の本がおすすめだよ！"


def test_the_persona_read_out_under_the_prompts_labels_is_left_out() -> None:
    from companions.companion.composing import strip_echoed

    # measured on the real 0.5B model: Akari's whole line, her personality under its label in the prompt
    assert strip_echoed("性格: 明るく好奇心旺盛。人の話にすぐ驚く。", []) == ""
    assert strip_echoed("役割：会話を盛り上げる\nえっ、ほんと？", []) == "えっ、ほんと？"
    assert strip_echoed("Background: grew up near the sea.\nI love the sea!", []) == "I love the sea!"
    # a colon in a line of one's own is not a label
    assert strip_echoed("今日のテーマ: 星座！", []) == "今日のテーマ: 星座！"


def test_the_assistants_offer_after_a_line_of_its_own_is_left_out_and_the_line_kept() -> None:
    from companions.companion.composing import line_of

    def plain(text: str) -> str | None:
        found = line_of(None, text, (), lambda t: t)
        return found.text if found is not None else None

    # measured over 30 lines on the real 0.5B model
    assert plain("週末は大変楽しいですね。何かお手伝いできることがありましたら教えてください。") == (
        "週末は大変楽しいですね。")
    assert plain("こんにちは！何かお手伝いできることがありましたら、どうぞお気軽にお知らせください。") == "こんにちは！"
    assert plain("こんにちは！私のアシスタントは、あなたに質問を返すために使用できます。") == "こんにちは！"
    assert plain("Sure! Here's a tea recommendation for cold evening:") == "Sure!"
    intro = "人間の好みを明確に捉えるために、以下の星座が最も適切です:"
    assert plain(intro) == intro  # nothing else: kept whole
    assert sounds_like_an_assistant("以下の星座が最も適切です：")
    assert not sounds_like_an_assistant("Note: the stars are out tonight!")
    # nothing else: kept whole, for the line check to find it flawed (and ask again)
    assert sounds_like_an_assistant(plain("何かお手伝いできることがありましたら教えてください。") or "")


def test_an_assistants_offer_of_help_is_not_the_companion_speaking() -> None:
    # measured on the real 0.5B model: Hina's answer to "みなさん、こんにちは！"
    assert sounds_like_an_assistant("こんにちは！何でもお手伝いできます。何か質問があれば、いつでもお知らせください。")
    assert not sounds_like_an_assistant("質問があれば聞いてね！")
    assert not sounds_like_an_assistant("手伝おうか？")
    assert sounds_like_an_assistant("こんにちは！何かお手伝いできたりしたいですか？")  # measured on Madoi's runner
    assert not sounds_like_an_assistant("何か手伝おうか？")


async def test_the_recalled_block_read_out_is_no_line() -> None:
    from companions.cards.card import load_cards, sample_cards_dir
    from companions.companion.companion import Companion
    from companions.llm.scripted import ScriptedModel, reply_json, say
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    class Recall:
        """What a companion recalled from earlier conversations (companions/memory/recall.py's block)."""

        closed = False

        async def prepare(self, message: Message, *, earlier: list[str], in_context: set[str]) -> None:
            return None

        def prepare_soon(self, message: Message, *, earlier: list[str], in_context: set[str]) -> None:
            return None

        async def ready(self, message: Message) -> None:
            return None

        def block_for(self, message: Message | None, language: str) -> str:
            return "# 前に聞いたこと\n2026年11月26日、userが「みなさん、こんにちは！」と言いました。"

        def shown(self, message: Message | None) -> tuple[()]:
            return ()

        def holds_imported(self, message: Message | None) -> bool:
            return False

        async def aclose(self) -> None:
            return None

    bus = InProcessBus()
    card = load_cards([sample_cards_dir()]).by_id()["souta"]
    model = ScriptedModel("souta")
    model.lane("event_params").always(reply_json({"need_response": True, "needs_facts": False}))
    # measured: Souta read his recall block out as his line
    model.add(say("2026年11月26日、userが「みなさん、こんにちは！」と言いました。"), say("やあ、また会えたね。"))
    souta = Companion(card, model, bus=bus, queries=QueryBroker(bus), language="ja")
    souta.recall = Recall()  # type: ignore[assignment]
    message = Message.create(from_="user", message="みなさん、こんにちは！", to=["souta"])
    await souta.hear(message)
    line = await souta.compose(message)
    assert line is not None
    assert line.text == "やあ、また会えたね。"
    await souta.aclose()
    await bus.aclose()


def test_an_assistants_summary_or_disclaimer_is_not_the_companion_speaking() -> None:
    # measured on the real 0.5B model: Souta's answers to "Souta, what do you like to do on weekends?"
    assert sounds_like_an_assistant("I don't have much knowledge about weekends, but I can tell you that many people "
                                    "enjoy doing things on weekends.")
    assert sounds_like_an_assistant("User's conversation can be summarized as follows:")
    assert not sounds_like_an_assistant("I don't have a map with me, sadly.")


async def test_a_line_is_asked_for_with_a_token_limit_of_its_length() -> None:
    from companions.cards.card import load_cards, sample_cards_dir
    from companions.companion.companion import TURN_MAX_TOKENS, Companion
    from companions.llm.scripted import ScriptedModel, reply_json, say
    from companions.wire.bus import InProcessBus
    from companions.wire.protocol import Message
    from companions.wire.query_broker import QueryBroker

    bus = InProcessBus()
    model = ScriptedModel("souta")
    model.lane("event_params").always(reply_json({"need_response": True, "needs_facts": False}))
    model.add(say("江戸後期の地図だよ。"))
    souta = Companion(load_cards([sample_cards_dir()]).by_id()["souta"], model, bus=bus, queries=QueryBroker(bus),
                      language="ja")
    message = Message.create(from_="user", message="颯太さん、この地図はいつのもの？", to=["souta"])
    await souta.hear(message)
    await souta.compose(message)
    limit = souta.line_rules.limit("ja")
    asked = model.requests_in("")[0].max_tokens
    assert asked is not None
    assert limit < asked < TURN_MAX_TOKENS  # measured: 256 tokens of rambling, then cleaned to nothing
    await souta.aclose()
    await bus.aclose()


def test_a_greeting_alone_is_anyones_words() -> None:
    for greeting in ("Hello everyone!", "Hi, everyone!", "こんにちは、みんな！", "こんばんは。", "Good evening!"):
        assert only_a_greeting(greeting), greeting
    for line in ("Hello everyone, I love old maps!", "こんにちは！今日は星がきれいだね。", "Hi, Akari!"):
        assert not only_a_greeting(line), line
