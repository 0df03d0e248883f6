"""The query classifier, stage one of hybrid search (seed 002): local, global, relationship or hybrid.

The type picks the weights that fuse the keyword, semantic and graph channels (:func:`get_search_weights`).
Two classifiers share the :class:`QueryClassifier` protocol:

* :class:`RuleBasedClassifier` -- Japanese and English cue patterns, MeCab for Japanese nouns; instant, offline.
* :class:`LLMClassifier` -- asks a :class:`~companions.llm.types.ChatModel` for JSON and falls back to the rules
  when the model fails, times out or answers something unparsable; a confident-enough answer is kept, a
  low-confidence one becomes ``hybrid`` (equal weights) as the seed says.

The seed's ``Result<..., Error>`` becomes: a blank query raises :class:`EmptyQueryError`; every model failure is a
normal result marked ``source="rules"`` with ``fallback_reason`` set, and counted in ``LLMClassifier.fallbacks``.
:class:`SeedRules` is the seed's plain rule classifier, verbatim, kept as the benchmark baseline.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from companions.llm.types import ChatMessage, ChatModel, ChatRequest, JsonSchemaFormat, LLMError, complete
from companions.search.classify import rules

log = logging.getLogger(__name__)

QueryType: TypeAlias = Literal["local", "global", "relationship", "hybrid"]
FallbackReason: TypeAlias = Literal["llm_error", "timeout", "unparsable", "llm_disabled"]


class QueryClassification(BaseModel):
    """What kind of question a query is, what it is about, and how sure the classifier is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: QueryType
    confidence: float = Field(ge=0.0, le=1.0)
    extracted_entities: tuple[str, ...] = ()
    relation_hint: str | None = None  # comparison | relationship | causation | reason | general (relationship only)
    keywords: tuple[str, ...] = ()
    intent: str = ""
    source: Literal["rules", "llm"] = "rules"
    fallback_reason: FallbackReason | None = None  # set when an LLM classifier had to use the rules


@dataclass(frozen=True, slots=True)
class QueryClassificationOptions:
    """Per-call options. ``min_confidence``: an LLM answer below it becomes ``hybrid``."""

    use_llm: bool = True
    min_confidence: float = 0.6
    extract_entities: bool = True


@dataclass(frozen=True, slots=True)
class SearchWeights:
    """How much each retrieval channel counts in the fusion (0-1 each, summing to 1)."""

    keyword: float
    semantic: float
    graph: float


class EmptyQueryError(ValueError):
    """The query was empty or only whitespace: there is nothing to classify."""


def get_search_weights(query_type: QueryType) -> SearchWeights:
    """The seed's fusion weights per query type (K:S:G)."""
    match query_type:
        case "global":
            return SearchWeights(keyword=0.2, semantic=0.3, graph=0.5)
        case "relationship":
            return SearchWeights(keyword=0.2, semantic=0.2, graph=0.6)
        case "local":
            return SearchWeights(keyword=0.35, semantic=0.35, graph=0.3)
        case "hybrid":
            return SearchWeights(keyword=0.33, semantic=0.33, graph=0.34)
        case _:
            assert_never(query_type)


class QueryClassifier(Protocol):
    """Classifies search queries (seed 002 ``IQueryClassifier``)."""

    async def classify(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        """Classifies ``query``. Raises :class:`EmptyQueryError` for a blank query."""
        ...

    def get_search_weights(self, query_type: QueryType) -> SearchWeights:
        """The fusion weights for ``query_type``."""
        ...


_INTENTS: dict[QueryType, str] = {
    "global": "全体的な概要や傾向についての質問",
    "relationship": "エンティティ間の関係についての質問",
    "local": "特定の情報についての質問",
    "hybrid": "全体の傾向と特定のエンティティ間の関係の両方に関わる複合的な質問",
}
_INTENTS_EN: dict[QueryType, str] = {
    "global": "A question about the overall picture or trends",
    "relationship": "A question about how entities relate or compare",
    "local": "A question about a specific piece of information",
    "hybrid": "A composite question about overall trends and the relations behind them",
}


def _intent(query_type: QueryType, query: str) -> str:
    return (_INTENTS if rules.is_japanese(query) else _INTENTS_EN)[query_type]


def _checked(query: str) -> str:
    if not query or not query.strip():
        raise EmptyQueryError("the query is empty")
    return query.strip()


class RuleBasedClassifier:
    """Cue patterns for Japanese and English; no model, no network, well under a millisecond per query.

    Two named things set side by side (「AとB、どちらが…」, "between A and B") make a relationship query, unless the
    question is about a whole collection and asks for a cause or relation too; otherwise global cues (themes,
    trends, summaries) come next, and a global question that also asks for a cause or relation ("why did the overall
    trend change?") is ``hybrid``; then relationship cues (comparison words, "-er than", relation and cause words).
    Everything else is a local question. A question about a whole collection is recognised by its cue words or by a
    collection noun with an aggregate word (「保存した記事はどんなジャンルに偏っている？」, "what do my notes keep
    coming back to"); scoped to the whole collection (全体, across, overall), a comparison of two named things is
    composite. Relations are recognised by kind (cause and effect, before and after, agreement, ties, two things in
    one yes/no question: ``relations``), and 「AとB」 only where MeCab tags と as the particle between
    two nouns (``japanese``).
    """

    async def classify(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        return self.classify_now(query, options)

    def classify_now(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        """The same as :meth:`classify`, callable from synchronous code (CLI, benchmarks)."""
        query = _checked(query)
        opts = options or QueryClassificationOptions()
        found = rules.match_rules(query)
        query_type: QueryType
        composite = bool(found.global_cues) and (found.causal or (found.scope and found.comparing))
        if found.relationship_cues and len(found.pair) == 2 and not composite:
            # Two named things side by side: a comparison even when it mentions a theme or a trend (but the
            # relation of two things across a whole collection, 「資料全体でのAとBの関係」, is a composite question).
            query_type, confidence = "relationship", min(0.95, 0.75 + 0.05 * len(found.relationship_cues))
        elif composite:
            query_type, confidence = "hybrid", 0.6
        elif found.global_cues:
            query_type, confidence = "global", min(0.95, 0.75 + 0.05 * len(found.global_cues))
        elif found.relationship_cues:
            query_type, confidence = "relationship", min(0.95, 0.75 + 0.05 * len(found.relationship_cues))
        else:
            query_type, confidence = "local", 0.7
        entities = rules.extract_entities(query, found.pair) if opts.extract_entities else []
        return QueryClassification(
            type=query_type,
            confidence=confidence,
            extracted_entities=tuple(entities),
            relation_hint=rules.relation_hint(query) if query_type in ("relationship", "hybrid") else None,
            keywords=tuple(rules.extract_keywords(query)),
            intent=_intent(query_type, query),
        )

    def get_search_weights(self, query_type: QueryType) -> SearchWeights:
        return get_search_weights(query_type)


class SeedRules:
    """The seed's ``RuleBasedQueryClassifier``, verbatim: the baseline that Madoi's rules are measured against."""

    async def classify(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        return self.classify_now(query, options)

    def classify_now(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        query = rules.rules_text(query)  # the seed's patterns backtrack in cubic time on a long text
        for pattern in rules.SEED_GLOBAL_PATTERNS:
            if pattern.search(query):
                return QueryClassification(type="global", confidence=0.8, keywords=tuple(rules.seed_keywords(query)),
                                           intent=_INTENTS["global"])
        for pattern in rules.SEED_RELATIONSHIP_PATTERNS:
            if (m := pattern.search(query)) is not None:
                return QueryClassification(
                    type="relationship", confidence=0.8, extracted_entities=tuple(g for g in m.groups() if g),
                    relation_hint=rules.relation_hint(query), keywords=tuple(rules.seed_keywords(query)),
                    intent=_INTENTS["relationship"])
        return QueryClassification(type="local", confidence=0.7, extracted_entities=tuple(rules.seed_entities(query)),
                                   keywords=tuple(rules.seed_keywords(query)), intent=_INTENTS["local"])

    def get_search_weights(self, query_type: QueryType) -> SearchWeights:
        return get_search_weights(query_type)


# --- the LLM classifier ----------------------------------------------------------------------------------------------

PROMPT_JA = """以下の検索クエリを分類してください。

クエリタイプの定義:
- local: 特定のエンティティ、事実、定義に関する質問
  例: "TypeScriptとは？", "Reactの特徴は？", "このAPIの使い方は？"
- global: 全体のテーマ、傾向、概要に関する質問
  例: "全体のテーマは？", "主要な話題は何？", "何について書かれている？"
- relationship: エンティティ間の関係、比較、因果関係に関する質問
  例: "AとBの関係は？", "ReactとVueの違いは？", "なぜXがYを使うのか？"

クエリ:
"{query}"

JSON形式で出力してください:
{{
  "type": "local | global | relationship",
  "confidence": 0.0-1.0の信頼度,
  "extractedEntities": ["抽出されたエンティティ名", ...],
  "relationHint": "関係性クエリの場合、関係のヒント（例: '比較', '原因'）",
  "keywords": ["重要なキーワード", ...],
  "intent": "クエリの意図を1文で説明"
}}"""

PROMPT_EN = """Classify the following search query.

Query types:
- local: a question about a specific entity, fact or definition
  e.g. "What is TypeScript?", "What are React's features?", "How do I use this API?"
- global: a question about overall themes, trends or an overview
  e.g. "What is the overall theme?", "What are the main topics?", "What is this about?"
- relationship: a question about relations between entities, a comparison or a cause
  e.g. "How are A and B related?", "What is the difference between React and Vue?", "Why does X use Y?"

Query:
"{query}"

Answer in JSON:
{{
  "type": "local | global | relationship",
  "confidence": confidence from 0.0 to 1.0,
  "extractedEntities": ["entity names found", ...],
  "relationHint": "for relationship queries, the kind of relation (e.g. 'comparison', 'cause')",
  "keywords": ["important keywords", ...],
  "intent": "the intent of the query in one sentence"
}}"""


class _LLMAnswer(BaseModel):
    """The JSON the model is asked for (camelCase as in the seed's prompt; snake_case accepted too)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    type: QueryType = "hybrid"
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    extracted_entities: list[str] = Field(default_factory=list, alias="extractedEntities")
    relation_hint: str | None = Field(default=None, alias="relationHint")
    keywords: list[str] = Field(default_factory=list)
    intent: str = ""


_ANSWER_SCHEMA = JsonSchemaFormat(name="query_classification", schema_=_LLMAnswer.model_json_schema(by_alias=True))


def parse_llm_answer(text: str) -> _LLMAnswer | None:
    """The first JSON object in the model's reply (after prose, inside code fences) that validates, else None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            data, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(data, dict):
            try:
                return _LLMAnswer.model_validate(data)
            except ValidationError:
                return None
        start = text.find("{", start + 1)
    return None


class LLMClassifier:
    """Asks a chat model to classify the query (seed 002 ``LLMQueryClassifier``), with the rules as the safety net.

    Args:
        model: the chat model (any backend behind the ChatModel port).
        rules: the fallback classifier; Madoi's rules by default.
        timeout_s: a model slower than this is abandoned for the rules, so search never waits on a stuck backend.
    """

    def __init__(self, model: ChatModel, rules: QueryClassifier | None = None, *, timeout_s: float = 15.0) -> None:
        self._model = model
        self._rules: QueryClassifier = rules if rules is not None else RuleBasedClassifier()
        self._timeout_s = timeout_s
        self.fallbacks: Counter[str] = Counter()  # reason -> count, plus "low_confidence" answers turned hybrid

    def get_search_weights(self, query_type: QueryType) -> SearchWeights:
        return get_search_weights(query_type)

    async def classify(self, query: str, options: QueryClassificationOptions | None = None) -> QueryClassification:
        query = _checked(query)
        opts = options or QueryClassificationOptions()
        if not opts.use_llm:
            return await self._fallback(query, opts, "llm_disabled")
        prompt = (PROMPT_JA if rules.is_japanese(query) else PROMPT_EN).format(query=query.replace('"', "'"))
        request = ChatRequest(messages=(ChatMessage.user(prompt),), temperature=0.1, max_tokens=500,
                              response_format=_ANSWER_SCHEMA)
        try:
            async with asyncio.timeout(self._timeout_s):
                completion = await complete(self._model, request)
        except TimeoutError:
            log.warning("query classifier: %s took longer than %.1fs; using the rules", self._model.name,
                        self._timeout_s)
            return await self._fallback(query, opts, "timeout")
        except LLMError as exc:
            log.warning("query classifier: %s failed (%s); using the rules", self._model.name, exc)
            return await self._fallback(query, opts, "llm_error")
        answer = parse_llm_answer(completion.message.text)
        if answer is None:
            log.warning("query classifier: unparsable answer from %s; using the rules", self._model.name)
            return await self._fallback(query, opts, "unparsable")
        query_type: QueryType = answer.type
        if answer.confidence < opts.min_confidence:
            self.fallbacks["low_confidence"] += 1
            query_type = "hybrid"
        return QueryClassification(
            type=query_type,
            confidence=answer.confidence,
            extracted_entities=tuple(answer.extracted_entities) if opts.extract_entities else (),
            relation_hint=answer.relation_hint,
            keywords=tuple(answer.keywords),
            intent=answer.intent,
            source="llm",
        )

    async def _fallback(self, query: str, opts: QueryClassificationOptions,
                        reason: FallbackReason) -> QueryClassification:
        if reason != "llm_disabled":
            self.fallbacks[reason] += 1
        result = await self._rules.classify(query, opts)
        return result.model_copy(update={"fallback_reason": reason})


def make_query_classifier(model: ChatModel | None = None, *, timeout_s: float = 15.0) -> QueryClassifier:
    """The classifier for the app: the LLM one (with rules as fallback) when a model is configured, else the rules."""
    if model is None:
        return RuleBasedClassifier()
    return LLMClassifier(model, timeout_s=timeout_s)
