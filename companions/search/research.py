"""The research agent (seed 004): plan queries, search them concurrently, reflect, synthesize a cited answer.

With a ChatModel every stage asks the model (JSON for plans and reflection, prose with ``[n]`` citations for the
answer); without one, or when the model fails, rules take over: the question is decomposed at its named entities
and conjunctions, reflection retries queries that found nothing with their keywords, and the answer is an
extractive summary of the best sentences, each cited. Research is never worse with a model than without: each model
step waits only as long as the endpoint's measured speed says the request should take (:func:`step_bound_s`), a
model that timed out is not asked again in that run, and an answer with no words of its own (a citation, a source's
title) gives way to the extractive one; ``ResearchResult.notes`` says why. ``run`` is cancellable (cancel its task) and
reports every stage as a :class:`ResearchProgress` event through the ``progress`` callback (e.g. ``bus.publish``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, TypeAlias

from pydantic import BaseModel, Field, ValidationError

from companions.common.untrusted_data import parse_json
from companions.llm.capabilities import capabilities_of, estimate_tokens
from companions.llm.types import ChatMessage, ChatModel, ChatRequest, JsonSchemaFormat, LLMError, complete
from companions.search.classify.query_classifier import EmptyQueryError, QueryClassification
from companions.search.engine import SearchHit, SearchResponse
from companions.search.graph import entity_key, sentences
from companions.search.tokenize import words
from companions.wire.bus import LocalEvent

log = logging.getLogger(__name__)

Stage: TypeAlias = Literal["planning", "searching", "reflecting", "synthesizing", "done", "cancelled", "failed"]
_ids = itertools.count(1)

# How long a model step may take. Before the endpoint's speed is measured a step gets UNMEASURED_STEP_S; after, its
# expected time (prompt processing + generation, companions/llm/capabilities.py) times STEP_MARGIN plus STEP_SLACK_S
# (a busy machine, a slot still finishing another request), never more than MAX_STEP_S: the user waits for the
# extractive answer at most that long per step, and once a step timed out the run asks the model nothing more.
UNMEASURED_STEP_S: Final = 30.0
STEP_MARGIN: Final = 2.0
STEP_SLACK_S: Final = 5.0
MAX_STEP_S: Final = 90.0
JSON_STEP_TOKENS: Final = 200
ANSWER_TOKENS: Final = 400


def step_bound_s(model: ChatModel, prompt: str, max_tokens: int) -> float:
    """The seconds a research step may wait for ``model`` to answer ``prompt`` with up to ``max_tokens``."""
    found = capabilities_of(model)
    expected = found.estimate_s(estimate_tokens(prompt), max_tokens) if found is not None else None
    if expected is None:
        return UNMEASURED_STEP_S
    return min(MAX_STEP_S, expected * STEP_MARGIN + STEP_SLACK_S)


class SearchPort(Protocol):
    async def search(self, text: str, *, limit: int = 10, classification: QueryClassification | None = None,
                     ) -> SearchResponse: ...

    async def classify(self, text: str) -> QueryClassification: ...


@dataclass(frozen=True)
class ResearchProgress(LocalEvent):
    """One step of a research run, for the UI."""

    run_id: int
    stage: Stage
    round: int = 0
    queries: tuple[str, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Citation:
    number: int
    source: str
    title: str
    snippet: str


@dataclass
class ResearchResult:
    question: str
    answer: str
    citations: list[Citation]
    queries: list[str]
    rounds: int
    used_model: bool
    notes: list[str] = field(default_factory=list)  # model failures that fell back to rules


class _RunModel:
    """The model as one research run uses it: each request bounded by :func:`step_bound_s`, and after a timeout
    not asked again in this run (a model too slow for one step is too slow for the next)."""

    def __init__(self, model: ChatModel | None, notes: list[str]) -> None:
        self.model = model
        self.notes = notes

    async def ask(self, step: str, request: ChatRequest) -> str | None:
        """The model's text for ``request``; None when there is no model, it timed out now or before, or failed
        (each failure noted as ``<step>: <why>``)."""
        if self.model is None:
            return None
        prompt = "\n".join(m.text for m in request.messages)
        bound = step_bound_s(self.model, prompt, request.max_tokens or ANSWER_TOKENS)
        try:
            async with asyncio.timeout(bound):
                return (await complete(self.model, request)).message.text
        except TimeoutError:
            self.notes.append(f"{step}: the language model took longer than {bound:.3g} s")
            self.model = None
        except LLMError as exc:
            self.notes.append(f"{step}: {exc}")
        return None


class _Plan(BaseModel):
    queries: list[str] = Field(default_factory=list)


class _Reflection(BaseModel):
    done: bool = True
    queries: list[str] = Field(default_factory=list)


_SPLIT = re.compile(r"[、,;；]|\s+(?:and|vs\.?|versus)\s+|と(?=[^と]{1,20}(?:の|を|は|が))|および|及び|や")


def decompose(question: str, classification: QueryClassification | None, max_queries: int = 4) -> list[str]:
    """Rule-based planning: the question itself, then one query per named entity or conjunct."""
    parts: list[str] = [question.strip()]
    entities = list(classification.extracted_entities) if classification else []
    if len(entities) >= 2:
        parts += entities
    else:
        for sentence in sentences(question):
            pieces = [p.strip(" ?？。") for p in _SPLIT.split(sentence)]
            if len([p for p in pieces if p]) >= 2:
                parts += [p for p in pieces if len(p) >= 2]
    return list(dict.fromkeys(p for p in parts if p))[:max_queries]


class ResearchAgent:
    """Args:
    search: the search engine (anything with ``search`` and ``classify``).
    model: the chat model; None for the rule-based pipeline.
    concurrency: searches running at once.
    max_rounds: search rounds including the first (reflection may add up to ``max_rounds - 1``).
    progress: called with each :class:`ResearchProgress` (must not block; ``bus.publish`` fits).
    """

    def __init__(self, search: SearchPort, model: ChatModel | None = None, *, concurrency: int = 3,
                 max_rounds: int = 2, hits_per_query: int = 5, max_sources: int = 8,
                 progress: Callable[[ResearchProgress], object] | None = None) -> None:
        self.search = search
        self.model = model
        self.concurrency = max(1, concurrency)
        self.max_rounds = max(1, max_rounds)
        self.hits_per_query = hits_per_query
        self.max_sources = max_sources
        self.progress = progress

    def _emit(self, event: ResearchProgress) -> None:
        if self.progress is not None:
            try:
                self.progress(event)
            except Exception:
                log.exception("research progress callback failed")

    async def run(self, question: str) -> ResearchResult:
        """Researches ``question``. Raises EmptyQueryError for a blank question; cancel the task to stop."""
        if not question.strip():
            raise EmptyQueryError("the question is empty")
        run_id = next(_ids)
        notes: list[str] = []
        model = _RunModel(self.model, notes)
        try:
            self._emit(ResearchProgress(run_id, "planning"))
            classification = await self.search.classify(question)
            queries = await self._plan(model, question, classification)
            found: dict[tuple[str, int], tuple[SearchHit, float]] = {}
            asked: list[str] = []
            rounds = 0
            while queries and rounds < self.max_rounds:
                rounds += 1
                self._emit(ResearchProgress(run_id, "searching", rounds, tuple(queries)))
                results = await self._execute(queries)
                asked += queries
                for response in results:
                    for rank, hit in enumerate(response.hits):
                        key = (hit.source, hit.chunk_id)
                        score = 1.0 / (rank + 1)
                        if key not in found or found[key][1] < score:
                            found[key] = (hit, score)
                if rounds >= self.max_rounds:
                    break
                self._emit(ResearchProgress(run_id, "reflecting", rounds))
                queries = [q for q in await self._reflect(model, question, results, asked) if q not in asked]
            hits = [h for h, _ in sorted(found.values(), key=lambda hs: -hs[1])][: self.max_sources]
            self._emit(ResearchProgress(run_id, "synthesizing", rounds, detail=f"{len(hits)} sources"))
            answer, used = await self._synthesize(model, question, hits)
            citations = [Citation(i, h.source, h.title, h.snippet) for i, h in enumerate(hits, start=1)]
            result = ResearchResult(question, answer, citations, asked, rounds, used, notes)
            self._emit(ResearchProgress(run_id, "done", rounds, tuple(asked), detail=f"{len(citations)} citations"))
            return result
        except asyncio.CancelledError:
            self._emit(ResearchProgress(run_id, "cancelled"))
            raise
        except Exception as exc:
            self._emit(ResearchProgress(run_id, "failed", detail=str(exc)))
            raise

    async def _execute(self, queries: Sequence[str]) -> list[SearchResponse]:
        limit = asyncio.Semaphore(self.concurrency)

        async def one(query: str) -> SearchResponse:
            async with limit:
                return await self.search.search(query, limit=self.hits_per_query)

        async with asyncio.TaskGroup() as group:  # a failure or a cancel stops every sibling search
            tasks = [group.create_task(one(q)) for q in queries]
        return [t.result() for t in tasks]

    @staticmethod
    async def _ask_json(model: _RunModel, prompt: str, schema: type[BaseModel]) -> BaseModel | None:
        step = schema.__name__.strip("_").lower()
        request = ChatRequest(messages=(ChatMessage.user(prompt),), temperature=0.0, max_tokens=JSON_STEP_TOKENS,
                              response_format=JsonSchemaFormat(name=step, schema_=schema.model_json_schema()))
        text = await model.ask(step, request)
        if text is None:
            return None
        try:
            return schema.model_validate(parse_json(text[text.find("{") : text.rfind("}") + 1]))
        except (ValueError, ValidationError) as exc:
            model.notes.append(f"{step}: {exc}")
            return None

    async def _plan(self, model: _RunModel, question: str, cls: QueryClassification) -> list[str]:
        prompt = ("Plan up to 4 search queries (same language as the question) that together answer it. "
                  f'Answer JSON {{"queries": [...]}}.\nQuestion: {question}')
        plan = await self._ask_json(model, prompt, _Plan)
        if isinstance(plan, _Plan):
            queries = list(dict.fromkeys(q.strip() for q in plan.queries if q.strip()))[:4]
            if queries:
                return queries
        return decompose(question, cls)

    async def _reflect(self, model: _RunModel, question: str, results: Sequence[SearchResponse],
                       asked: Sequence[str]) -> list[str]:
        digest = "\n".join(f"- {r.query}: " + " | ".join(h.snippet for h in r.hits[:3]) for r in results)
        prompt = ("Do these search results answer the question? If not, give up to 3 new search queries. "
                  f'Answer JSON {{"done": true|false, "queries": [...]}}.\nQuestion: {question}\nResults:\n{digest}')
        reflection = await self._ask_json(model, prompt, _Reflection)
        if isinstance(reflection, _Reflection):
            return [] if reflection.done else [q.strip() for q in reflection.queries if q.strip()][:3]
        # Rules: a query that found nothing is retried as its content words.
        retries = [" ".join(words(r.query)) for r in results if not r.hits]
        return [q for q in retries if q and q not in asked]

    @staticmethod
    async def _synthesize(model: _RunModel, question: str, hits: Sequence[SearchHit]) -> tuple[str, bool]:
        if not hits:
            return ("No sources were found for this question." if question.isascii()
                    else "この質問に関する資料は見つかりませんでした。"), False
        sources = "\n\n".join(f"[{i}] {h.title}\n{h.text[:1200]}" for i, h in enumerate(hits, start=1))
        prompt = ("Answer the question using only the numbered sources. Cite them inline as [1], [2]. "
                  "Answer in the question's language.\n\n"
                  f"Sources:\n{sources}\n\nQuestion: {question}")
        said = await model.ask("synthesis", ChatRequest(messages=(ChatMessage.user(prompt),), max_tokens=ANSWER_TOKENS))
        if said is not None:
            answer = said.strip()
            if says_something(answer, titles=[h.title for h in hits]):
                return answer, True
            # "[2]" alone, or "[2] conversation 1" (a citation and its source's title), cites the right source and
            # says nothing: a failure to answer, not an answer.
            model.notes.append(f"synthesis: no words in the answer ({answer[:40]!r})" if answer
                               else "synthesis: empty answer")
        return extractive_answer(question, hits), False


_CITATION: Final = re.compile(r"\[\s*\d+(?:\s*[,，、\-–]\s*\d+)*\s*\]")


def says_something(answer: str, titles: Sequence[str] = ()) -> bool:
    """Whether ``answer`` has words of its own besides citations ("[2]", "[1, 3]"), the sources' ``titles`` and
    punctuation."""
    rest = _CITATION.sub("", answer).casefold()
    for title in sorted((t.casefold() for t in titles if t.strip()), key=len, reverse=True):
        rest = rest.replace(title, "")
    return any(c.isalnum() for c in rest)


def extractive_answer(question: str, hits: Sequence[SearchHit], max_sentences: int = 3) -> str:
    """The sentences of the sources sharing the most words with the question, each followed by its citation."""
    qwords = {entity_key(w) for w in words(question) if len(w) >= 2}
    scored: list[tuple[float, int, int, str]] = []
    for number, hit in enumerate(hits, start=1):
        for position, sentence in enumerate(sentences(hit.text)):
            key = entity_key(sentence)
            overlap = sum(1 for w in qwords if w in key)
            # Earlier sources and earlier sentences win ties: the fused ranking already ordered them.
            scored.append((-(overlap + 1.0 / (number + 1)), number, position, sentence))
    best = sorted(scored)[:max_sentences]
    best.sort(key=lambda t: (t[1], t[2]))
    return " ".join(f"{s.strip()} [{n}]" for _, n, _, s in best)
