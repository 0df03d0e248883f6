"""The query classifier (seed 002): rules in Japanese and English, the LLM classifier and its fallbacks, weights."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companions.llm.types import ChatMessage, ChatRequest, Completion, LLMError, StreamEvent, TextDelta
from companions.search.classify.query_classifier import (
    EmptyQueryError,
    LLMClassifier,
    QueryClassificationOptions,
    QueryClassifier,
    RuleBasedClassifier,
    SearchWeights,
    SeedRules,
    get_search_weights,
    make_query_classifier,
)


class FakeChatModel:
    """A ChatModel double: answers each request with the next queued reply (text, an LLMError, or "stall")."""

    def __init__(self, *replies: str | LLMError) -> None:
        self._replies = list(replies)
        self.requests: list[ChatRequest] = []
        self.never = asyncio.Event()  # a stalled reply waits on this, which nobody sets
        self.called = asyncio.Event()  # set when a request arrives

    @property
    def name(self) -> str:
        return "fake"

    @property
    def supports_images(self) -> bool:
        return False

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        self.called.set()
        if not self._replies:
            raise AssertionError(f"unexpected request: {request.messages[-1].text[:80]}")
        reply = self._replies.pop(0)
        if isinstance(reply, LLMError):
            raise reply
        if reply == "stall":
            await self.never.wait()
        yield TextDelta(text=reply)
        yield Completion(message=ChatMessage.assistant(reply))

    def assert_used_up(self) -> None:
        assert not self._replies, f"unused replies: {self._replies}"


def answer(type_: str, confidence: float = 0.9, **extra: Any) -> str:
    return json.dumps({"type": type_, "confidence": confidence, "intent": "test", **extra}, ensure_ascii=False)


rules = RuleBasedClassifier()


# --- the seed's test cases -------------------------------------------------------------------------------------------


async def test_seed_llm_cases_local_global_relationship() -> None:
    model = FakeChatModel(
        answer("local", 0.9, extractedEntities=["TypeScript"]),
        answer("global", 0.85),
        answer("relationship", 0.9, extractedEntities=["React", "Vue"], relationHint="比較"),
    )
    classifier = LLMClassifier(model)
    local = await classifier.classify("TypeScriptとは何ですか？")
    assert local.type == "local"
    assert local.confidence > 0.5
    assert local.source == "llm"
    assert (await classifier.classify("このドキュメント全体のテーマは何ですか？")).type == "global"
    rel = await classifier.classify("ReactとVueの違いは何ですか？")
    assert rel.type == "relationship"
    assert {"React", "Vue"} <= set(rel.extracted_entities)
    assert rel.relation_hint == "比較"
    model.assert_used_up()


async def test_seed_rule_cases() -> None:
    for query in ("全体のテーマは？", "概要を教えて", "What is this document about?"):
        assert (await rules.classify(query)).type == "global", query
    for query in ("TypeScriptとJavaScriptの違い", "Compare React and Vue"):
        assert (await rules.classify(query)).type == "relationship", query
    local = await rules.classify("TypeScriptとは何ですか？")
    assert local.type == "local"
    assert local.confidence > 0.5


async def test_rules_extract_the_compared_entities_and_keywords() -> None:
    result = await rules.classify("ReactとVueの違いは何ですか？")
    assert result.type == "relationship"
    assert result.extracted_entities[:2] == ("React", "Vue")
    assert result.relation_hint == "comparison"
    assert {"React", "Vue", "違い"} <= set(result.keywords)
    assert not {"は", "の", "何", "です"} & set(result.keywords)


async def test_rules_extract_quoted_and_proper_noun_entities() -> None:
    quoted = await rules.classify("『仮面ライダー電王』と『あまちゃん』、放送回数が多いのはどちらでしょう？")
    assert quoted.type == "relationship"
    assert {"仮面ライダー電王", "あまちゃん"} <= set(quoted.extracted_entities)
    people = await rules.classify("清原果耶と森田成一で活動開始が早かったのはどちらですか？")
    assert people.type == "relationship"
    assert {"清原果耶", "森田成一"} <= set(people.extracted_entities)
    dotted = await rules.classify("パブロ・ピカソと五代目古今亭志ん生のうち、先に出生したのは？")
    assert "パブロ・ピカソ" in dotted.extracted_entities
    english = await rules.classify('What did "Project Orion" deliver for Acme in 2023?')
    assert english.type == "local"
    assert {"Project Orion", "Acme"} <= set(english.extracted_entities)
    assert "What" not in english.extracted_entities


async def test_extract_entities_option_turns_extraction_off() -> None:
    result = await rules.classify("ReactとVueの違いは何ですか？", QueryClassificationOptions(extract_entities=False))
    assert result.extracted_entities == ()
    assert result.type == "relationship"


# --- every type, both languages --------------------------------------------------------------------------------------

JAPANESE = {
    "local": ["徳川家康の生年月日は？", "Reactについて教えて", "月光院の夫の墓所は東京都の何区にありますか？"],
    "global": ["私のメモには主にどんなことが書かれていますか？", "資料全体の傾向をざっくり教えて", "議事録を要約して"],
    "relationship": [
        "AとBの関係は？",
        "奈良市とドバイ、人口が多いのはどっち？",
        "円安が輸出企業に与える影響は？",
        "なぜ彼はPythonを選んだのか",
    ],
    "hybrid": [
        "全体の傾向はなぜ変わったのですか？",
        "資料全体を通して、売上と広告費の関係はどう変わってきた？",  # two things, but across the whole collection
        "これまでの会話の主な話題と、それぞれが生まれたきっかけを教えて。",
    ],
}
ENGLISH = {
    "local": ["What is TypeScript?", "Who founded Sony?", "When was the Eiffel Tower built?"],
    "global": ["What are the main themes across my notes?", "Give me an overview of the project.",
               "Summarize the meeting minutes."],
    "relationship": [
        "What is the difference between React and Vue?",
        "Which is older, Kyoto or Nara?",
        "Is Tokyo bigger than Osaka?",
        "How does caffeine affect sleep?",
        "Were both Lennon and McCartney born in Liverpool?",
        "Which of Paris and London has the larger population?",
        "React vs Vue: which is easier to learn?",
    ],
    "hybrid": [
        "Why did the overall trend change last year?",
        "Across all sources, how does remote work affect productivity?",
        "Give me a summary of the meeting notes and the reasons behind each decision.",
    ],
}


@pytest.mark.parametrize("language", [JAPANESE, ENGLISH], ids=["ja", "en"])
async def test_rules_classify_every_type(language: dict[str, list[str]]) -> None:
    for expected, queries in language.items():
        for query in queries:
            result = await rules.classify(query)
            assert result.type == expected, query
            assert 0.5 <= result.confidence <= 1.0
            assert result.intent


async def test_a_to_inside_a_word_or_before_no_joins_nothing() -> None:
    """ざっと, ひとこと, まとめると and 「Xとの会話」 hold the character と, but no two things set side by side."""
    assert (await rules.classify("ノートをざっと読んで、一番多い話題は？")).type == "global"
    assert (await rules.classify("サラとの会話ではどんな話題が多い？")).type == "global"
    pair = await rules.classify("実家と職場は近い？")  # the particle と with a word that relates the two
    assert pair.type == "relationship"
    assert pair.extracted_entities[:2] == ("実家", "職場")


@pytest.mark.parametrize("query", [
    "なんで昨日は渋滞してたの？",  # why, said casually
    "転職してから睡眠時間は増えた？",  # what changed once something happened
    "円安は旅行の予算にどう響いた？",  # cause and effect without 影響
    "Did the heat wave affect the tomato harvest?",
    "How come the package was returned?",
    "Has my knee pain improved since I switched shoes?",
    "Do the lease and the inspection report disagree about the damage?",
])
async def test_relations_of_every_kind_are_relationship_questions(query: str) -> None:
    assert (await rules.classify(query)).type == "relationship"


async def test_a_cause_word_describing_the_thing_asked_for_keeps_a_question_local() -> None:
    assert (await rules.classify("円安は旅行の予算にどう響いた？")).type == "relationship"
    assert (await rules.classify("大雪をもたらす気団は何気団？")).type == "local"
    assert (await rules.classify("What is the name of the drug that affects sleep?")).type == "local"


@pytest.mark.parametrize("query", ["Give me a rundown of the team wiki.",
                                   "What have we been arguing about in the retros?"])
async def test_whole_collection_questions_in_new_words_are_global(query: str) -> None:
    assert (await rules.classify(query)).type == "global"


async def test_a_theme_park_is_not_a_theme() -> None:
    assert (await rules.classify("横山裕の出身地の区にあるテーマパークは何ですか？")).type == "local"


async def test_english_pair_becomes_the_entities() -> None:
    result = await rules.classify("What is the relationship between inflation and unemployment?")
    assert result.type == "relationship"
    assert result.extracted_entities[:2] == ("inflation", "unemployment")
    assert result.relation_hint == "relationship"
    versus = await rules.classify("React vs Vue: which is easier to learn?")
    assert versus.extracted_entities[:2] == ("React", "Vue")
    assert versus.relation_hint == "comparison"


async def test_intent_is_in_the_language_of_the_query() -> None:
    assert (await rules.classify("What is TypeScript?")).intent == "A question about a specific piece of information"
    assert (await rules.classify("TypeScriptとは何ですか？")).intent == "特定の情報についての質問"


async def test_blank_query_is_a_clear_error() -> None:
    with pytest.raises(EmptyQueryError):
        await rules.classify("   ")
    with pytest.raises(EmptyQueryError):
        await LLMClassifier(FakeChatModel()).classify("")


def test_rules_give_the_same_answers_from_worker_threads() -> None:
    queries = [q for lang in (JAPANESE, ENGLISH) for qs in lang.values() for q in qs]
    expected = [rules.classify_now(q) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(rules.classify_now, queries)) == expected


# --- the LLM classifier: request and fallbacks -----------------------------------------------------------------------


async def test_llm_request_is_low_temperature_json_in_the_query_language() -> None:
    model = FakeChatModel(answer("local"), answer("local"))
    classifier = LLMClassifier(model)
    await classifier.classify("TypeScriptとは何ですか？")
    await classifier.classify("What is TypeScript?")
    ja, en = model.requests
    assert ja.temperature == 0.1
    assert ja.response_format is not None
    assert "extractedEntities" in ja.response_format.schema_["properties"]
    assert "以下の検索クエリを分類してください" in ja.messages[-1].text
    assert '"TypeScriptとは何ですか？"' in ja.messages[-1].text
    assert "Classify the following search query" in en.messages[-1].text


async def test_llm_error_falls_back_to_rules() -> None:
    model = FakeChatModel(LLMError("API error", retryable=True, status=503))
    classifier = LLMClassifier(model)
    result = await classifier.classify("全体のテーマは？")
    assert result.type == "global"
    assert result.source == "rules"
    assert result.fallback_reason == "llm_error"
    assert classifier.fallbacks["llm_error"] == 1


@pytest.mark.parametrize(
    "reply",
    ["I think this is a local query.", '{"type": "local", "confidence": ', '{"type": "sideways", "confidence": 0.9}',
     '{"type": "local", "confidence": 7}', "[1, 2]"],
    ids=["prose", "truncated", "unknown-type", "confidence-out-of-range", "not-an-object"],
)
async def test_unparsable_answer_falls_back_to_rules(reply: str) -> None:
    classifier = LLMClassifier(FakeChatModel(reply))
    result = await classifier.classify("ReactとVueの違いは何ですか？")
    assert result.type == "relationship"
    assert result.fallback_reason == "unparsable"
    assert {"React", "Vue"} <= set(result.extracted_entities)
    assert classifier.fallbacks["unparsable"] == 1


async def test_json_in_prose_or_code_fences_is_accepted() -> None:
    model = FakeChatModel(
        "Sure! Here it is:\n```json\n" + answer("global", 0.8) + "\n```",
        'Result: {"type": "relationship", "confidence": 0.9, "extracted_entities": ["A", "B"]} hope it helps',
    )
    classifier = LLMClassifier(model)
    assert (await classifier.classify("何について書かれている？")).type == "global"
    rel = await classifier.classify("AとBの関係は？")
    assert rel.type == "relationship"
    assert rel.extracted_entities == ("A", "B")
    assert rel.source == "llm"


async def test_low_confidence_becomes_hybrid() -> None:
    model = FakeChatModel(answer("local", 0.4), answer("local", 0.4))
    classifier = LLMClassifier(model)
    result = await classifier.classify("Reactの特徴は？")
    assert result.type == "hybrid"
    assert result.confidence == 0.4
    assert result.source == "llm"
    assert classifier.fallbacks["low_confidence"] == 1
    lenient = await classifier.classify("Reactの特徴は？", QueryClassificationOptions(min_confidence=0.3))
    assert lenient.type == "local"


async def test_missing_fields_take_the_seed_defaults() -> None:
    result = await LLMClassifier(FakeChatModel("{}")).classify("Reactの特徴は？")
    assert result.type == "hybrid"  # seed default type, and its default confidence 0.5 is below 0.6
    assert result.confidence == 0.5


async def test_a_stuck_model_is_abandoned_for_the_rules() -> None:
    model = FakeChatModel("stall")
    classifier = LLMClassifier(model, timeout_s=0.05)
    result = await classifier.classify("What are the main themes across my notes?")
    assert result.type == "global"
    assert result.fallback_reason == "timeout"


async def test_use_llm_false_never_calls_the_model() -> None:
    model = FakeChatModel()
    result = await LLMClassifier(model).classify("全体のテーマは？", QueryClassificationOptions(use_llm=False))
    assert result.type == "global"
    assert result.fallback_reason == "llm_disabled"
    assert model.requests == []


def test_factory_picks_llm_only_with_a_model() -> None:
    assert isinstance(make_query_classifier(None), RuleBasedClassifier)
    with_model: QueryClassifier = make_query_classifier(FakeChatModel())
    assert isinstance(with_model, LLMClassifier)


# --- weights ---------------------------------------------------------------------------------------------------------


def test_weights_are_the_seeds() -> None:
    assert get_search_weights("global") == SearchWeights(0.2, 0.3, 0.5)
    assert get_search_weights("relationship") == SearchWeights(0.2, 0.2, 0.6)
    assert get_search_weights("local") == SearchWeights(0.35, 0.35, 0.3)
    assert get_search_weights("hybrid") == SearchWeights(0.33, 0.33, 0.34)
    for classifier in (rules, SeedRules(), LLMClassifier(FakeChatModel())):
        g = classifier.get_search_weights("global")
        assert g.graph > g.keyword
        assert g.graph > g.semantic
        assert classifier.get_search_weights("relationship").graph > 0.5
        local = classifier.get_search_weights("local")
        assert local.keyword == pytest.approx(local.semantic, abs=0.05)
    for t in ("local", "global", "relationship", "hybrid"):
        w = get_search_weights(t)
        assert w.keyword + w.semantic + w.graph == pytest.approx(1.0)


# --- accuracy on the held-out split ----------------------------------------------------------------------------------


def test_held_out_accuracy_stays_above_the_measured_floor() -> None:
    """Measured 2026-11-23 on the held-out 30 %: all 0.960, relationship 0.977, local 0.966, global 0.885,
    hybrid 0.700 (10 questions), en 0.824 (hybrid included; 0.893 without, as the 0.857 measured on 2026-11-22).

    JEMHopQA (Ishii et al., CC BY-SA 4.0) comparison = relationship, compositional = local; plus Madoi's own
    global, English and composite (hybrid) sets in tests/data.
    """
    from bench.classifier_accuracy import JEMHOPQA, accuracy_by_type, entity_recall, load_queries

    if not JEMHOPQA.exists():
        pytest.skip(f"JEMHopQA is not at {JEMHOPQA} (set MADOI_JEMHOPQA)")
    heldout = load_queries("heldout")
    assert len(heldout) > 300
    ours, _ = accuracy_by_type(rules, heldout)
    seed, _ = accuracy_by_type(SeedRules(), heldout)
    assert ours["all"] >= 0.95
    assert ours["relationship"] >= 0.96
    assert ours["local"] >= 0.95
    assert ours["global"] >= 0.85
    assert ours["hybrid"] >= 0.60
    assert ours["english"] >= 0.80
    assert ours["all"] > seed["all"] + 0.3
    assert entity_recall(rules, "heldout") >= 0.97  # measured 0.991; the seed's extraction finds 0.262


async def test_cancelling_a_classification_cancels_the_model_call() -> None:
    model = FakeChatModel("stall")
    classifier = LLMClassifier(model, timeout_s=30)
    task = asyncio.create_task(classifier.classify("Reactの特徴は？"))
    await model.called.wait()  # the request is in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sum(classifier.fallbacks.values()) == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=1, max_size=80).filter(lambda s: s.strip() != ""))
def test_rules_classify_any_text(text: str) -> None:
    result = rules.classify_now(text)
    assert result.type in ("local", "global", "relationship", "hybrid")
    assert all(e.strip() for e in result.extracted_entities)


# --- with the project's scripted model and the real openai client ----------------------------------------------------


async def test_scripted_model_answers_on_the_classification_lane() -> None:
    from companions.llm.scripted import ScriptedModel, asks_json, reply_json

    model = ScriptedModel("classifier")
    model.lane("query_classification").add(
        reply_json({"type": "relationship", "confidence": 0.92, "extractedEntities": ["織田信長", "豊臣秀吉"],
                    "relationHint": "比較", "keywords": ["年上"], "intent": "二人の年齢比較"},
                   expect=asks_json("query_classification")),
    )
    result = await LLMClassifier(model).classify("織田信長と豊臣秀吉、年上はどちら？")
    assert result.type == "relationship"
    assert result.extracted_entities == ("織田信長", "豊臣秀吉")
    model.assert_used_up()


async def test_through_the_openai_client_against_a_local_server() -> None:
    from companions.llm.openai_backend import RetryPolicy, build_chat_model
    from companions.testing.openai_server import OpenAITestServer, error_reply, text_reply

    async with OpenAITestServer(models=["m"]) as server:
        server.script(text_reply(answer("global", 0.88, keywords=["テーマ"])), error_reply(400, "bad request"))
        model = build_chat_model(server.base_url, "m", "sk-test", timeout_s=5,
                                 retry=RetryPolicy(max_retries=0, base_delay_s=0.01, max_delay_s=0.01))
        try:
            classifier = LLMClassifier(model)
            first = await classifier.classify("このドキュメント全体のテーマは何ですか？")
            assert (first.type, first.source, first.keywords) == ("global", "llm", ("テーマ",))
            second = await classifier.classify("ReactとVueの違いは何ですか？")
            assert (second.type, second.fallback_reason) == ("relationship", "llm_error")
        finally:
            await model.aclose()
        body = server.chat_requests()[0].body
        assert body["temperature"] == 0.1
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["name"] == "query_classification"


def test_a_long_message_is_classified_by_its_opening_and_closing_at_once() -> None:
    # Recall classifies every message a companion answers. The seed's (.+)と(.+) patterns backtrack in cubic time:
    # over the whole of this message the rules took over ten seconds, with the window's loop waiting.
    story = "友達と公園に行って、それから映画を見ました。" * 150
    message = story + "ところで、京都と奈良の違いは何？"
    started = time.perf_counter()
    for classify in (rules.classify_now, SeedRules().classify_now):
        assert classify(message).type == "relationship"  # the closing question is read
    assert time.perf_counter() - started < 2.0
