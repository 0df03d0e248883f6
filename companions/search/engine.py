"""The search engine: the sync core that runs every channel in one thread, and the async facade around it.

``SearchCore`` owns the SQLite connection and the in-memory caches (vector matrix, entity graph); it is used from
one thread only. ``SearchEngine`` is what the app uses: every call hops to the core's single worker thread, so
embedding and SQLite work never block the event loop and the connection never crosses threads.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from companions.llm.types import ChatModel
from companions.search.classify.query_classifier import (
    QueryClassification,
    QueryClassifier,
    RuleBasedClassifier,
    SearchWeights,
    get_search_weights,
)
from companions.search.evidence import RERANK_DEPTH, rerank
from companions.search.fusion import DEFAULT_FUSION, Fused, FusionMethod, fuse
from companions.search.graph import Extraction
from companions.search.graph_channel import CommunitySummary, GraphChannel
from companions.search.index import (
    Change,
    ChunkRecord,
    DocKind,
    IndexedLine,
    SearchIndex,
    Upsert,
    split_chunks,
)
from companions.search.keyword import keyword_search
from companions.search.llm_extraction import extract_with_model
from companions.search.semantic import Embedder, EmbedderClosed, Vectors
from companions.search.tokenize import TokenMode, words
from companions.search.vector_search import ANN_MIN_VECTORS, Nearest, VectorSearch
from companions.search.worker_thread import DaemonWorkerExecutor

T = TypeVar("T")
log = logging.getLogger(__name__)
# Well within the stop budget of one component (app.runtime.runtime.STOP_TIMEOUT_S) and of the app (1 s).
CLOSE_WAIT_S = 0.3
IndexProgress = Callable[[int, int, str], object]  # (done, total, current file) during index_paths
CHANNEL_DEPTH = 50
QUERY_CACHE = 256
SNIPPET_CHARS = 160
CHANNELS = ("keyword", "semantic", "graph")


@dataclass(frozen=True)
class SearchHit:
    """One fused result: where it comes from, a snippet, the fused score and each channel's own score."""

    chunk_id: int
    source: str
    title: str
    kind: str
    snippet: str
    text: str
    score: float
    channel_scores: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "title": self.title, "kind": self.kind, "snippet": self.snippet,
                "score": round(self.score, 6), "channels": {k: round(v, 6) for k, v in self.channel_scores.items()}}


@dataclass(frozen=True)
class RecallCandidate:
    """A fused hit for long-term recall (companions/memory/recall.py): a chunk, and its line when it is one."""

    chunk_id: int
    score: float
    kind: str
    source: str
    text: str
    line: IndexedLine | None
    channel_scores: dict[str, float] = field(default_factory=dict)  # each channel that found it: its own score


@dataclass(frozen=True)
class SearchResponse:
    query: str
    classification: QueryClassification
    weights: SearchWeights
    hits: list[SearchHit]
    channels: dict[str, list[tuple[int, float]]]  # each channel's own ranking (chunk id, score), for the panel
    communities: list[CommunitySummary]
    elapsed_ms: float


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query word it contains (the start when none)."""
    flat = re.sub(r"\s+", " ", text).strip()
    lower = flat.lower()
    positions = [lower.find(w) for w in words(query) if len(w) >= 2]
    found = [p for p in positions if p >= 0]
    start = max(0, min(found) - width // 4) if found else 0
    piece = flat[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")


def weights_for(classification: QueryClassification, have_vectors: bool) -> dict[str, float]:
    w = get_search_weights(classification.type)
    weights = {"keyword": w.keyword, "semantic": w.semantic if have_vectors else 0.0, "graph": w.graph}
    return weights


class SearchCore:
    """Runs the channels and the fusion synchronously (one thread)."""

    def __init__(self, path: Path | str, embedder: Embedder | None = None, *, token_mode: TokenMode = "mixed",
                 fusion: FusionMethod = DEFAULT_FUSION, ann_min: int = ANN_MIN_VECTORS) -> None:
        self.index = SearchIndex(path, embedder, token_mode=token_mode)
        self.embedder = embedder
        self.fusion: FusionMethod = fusion
        self.graph = GraphChannel(self.index)
        self.vectors = VectorSearch(self.index, ann_min=ann_min)  # exact scan, or an inverted file when large
        self._query_vectors: dict[str, Vectors] = {}
        # Embedding a query (10-20 ms of native code that releases the GIL) runs here while this thread queries
        # SQLite for the keyword and graph channels; the helper touches no SQLite.
        self._embedding_thread = DaemonWorkerExecutor("search-index-query-embedding")
        self._query_model_requested = False

    def close(self) -> None:
        self._embedding_thread.shutdown(wait=False)
        self.vectors.close()
        self.index.close()

    def prepare_query_embedding(self) -> None:
        """Has the embedding thread load the query model now (~1 s), not at the first query, which then runs after
        it on the same thread. Does nothing after the first call."""
        if self.embedder is None or self._query_model_requested:
            return
        self._query_model_requested = True
        embedder = self.embedder
        loading = self._embedding_thread.submit(lambda: embedder.embed(["warm-up"], query=True))
        loading.add_done_callback(_log_warm_up_failure)

    def keyword(self, text: str, k: int = CHANNEL_DEPTH) -> list[tuple[int, float]]:
        return keyword_search(self.index.db, text, k, self.index.token_mode, self.index.term_frequencies)

    def semantic(self, text: str, k: int = CHANNEL_DEPTH) -> list[tuple[int, float]]:
        return self._semantic_started(text, k)()

    def _semantic_started(self, text: str, k: int) -> Callable[[], list[tuple[int, float]]]:
        """Starts the semantic channel and returns what finishes it (call it, in this thread, also on errors: it
        waits for the helper). The helper thread embeds the query (unless cached) and searches the vectors (faiss
        or numpy, both without the GIL and without SQLite); the exact rescoring from SQLite stays here."""
        if self.embedder is None:
            return list
        vectors = self.vectors
        vectors.refresh()
        cached = self._query_vectors.get(text)  # the research agent and the UI repeat queries
        embedder = self.embedder

        def on_helper() -> tuple[Vectors, Nearest]:
            vector = cached if cached is not None else embedder.embed([text], query=True)[0]
            return vector, vectors.nearest(vector, k)

        helper: Future[tuple[Vectors, Nearest]] = self._embedding_thread.submit(on_helper)

        def finish() -> list[tuple[int, float]]:
            vector, nearest = helper.result()  # no write may start while the helper searches the index
            if cached is None:
                if len(self._query_vectors) >= QUERY_CACHE:
                    self._query_vectors.pop(next(iter(self._query_vectors)))
                self._query_vectors[text] = vector
            return vectors.rescored(vector, nearest, k)

        return finish

    def reranked(self, fused: list[Fused], text: str, records: dict[int, ChunkRecord]) -> list[Fused]:
        """The fused hits re-ordered by sentence evidence (companions/search/evidence.py)."""
        return rerank(fused, text, lambda chunk_id: r.text if (r := records.get(chunk_id)) else None,
                      self.index.term_frequencies)

    def channel_rankings(self, text: str, classification: QueryClassification, k: int = CHANNEL_DEPTH,
                         ) -> tuple[dict[str, list[tuple[int, float]]], list[CommunitySummary]]:
        semantic = self._semantic_started(text, k)  # concurrent with the two SQLite channels below
        # The keyword channel first: SQLite releases the GIL while it walks the posting lists, which lets the
        # embedding thread tokenize the query and enter onnxruntime (which runs without the GIL) before the graph
        # channel's PageRank, pure Python, holds the GIL (JSQuAD: the encoder starts its layers ~1.5 ms sooner).
        try:
            keyword = self.keyword(text, k)
            communities: list[CommunitySummary] = []
            if classification.type == "global":
                graph_hits, communities = self.graph.global_search(text, k)
            else:
                graph_hits = self.graph.local_search(text, k, list(classification.extracted_entities))
        except BaseException:
            _wait_quietly(semantic)  # the helper may still be searching the vector index: no write before it ends
            raise
        return {"keyword": keyword, "semantic": semantic(), "graph": graph_hits}, communities

    def search(self, text: str, classification: QueryClassification, limit: int = 10,
               method: FusionMethod | None = None) -> SearchResponse:
        started = time.perf_counter()
        rankings, communities = self.channel_rankings(text, classification)
        weights = weights_for(classification, self.embedder is not None)
        fused = fuse(rankings, weights, method or self.fusion)[: max(limit, RERANK_DEPTH)]
        records = self.index.chunks([f.chunk_id for f in fused])
        fused = self.reranked(fused, text, records)[:limit]
        hits = [_hit(records[f.chunk_id], text, f.score, f.channel_scores) for f in fused if f.chunk_id in records]
        return SearchResponse(text, classification, get_search_weights(classification.type), hits, rankings,
                              communities, (time.perf_counter() - started) * 1000)


    def recall_candidates(self, text: str, classification: QueryClassification, depth: int,
                          weights: dict[str, float] | None = None) -> list[RecallCandidate]:
        """The ``depth`` best chunks for ``text`` fused over the channels (``weights``: the classifier's by default),
        with each conversation line's message, speaker and time: recall filters them by who heard what."""
        weights = weights or weights_for(classification, self.embedder is not None)
        if weights.get("graph", 0.0) > 0:
            rankings, _ = self.channel_rankings(text, classification, depth)
        else:  # the graph channel would cost its PageRank for nothing
            semantic = self._semantic_started(text, depth)
            try:
                keyword = self.keyword(text, depth)
            finally:
                found = semantic()
            rankings = {"keyword": keyword, "semantic": found}
        fused = fuse(rankings, weights)[:depth]
        ids = [f.chunk_id for f in fused]
        records, lines = self.index.chunks(ids), self.index.lines(ids)
        return [RecallCandidate(f.chunk_id, f.score, r.kind, r.source, r.text, lines.get(f.chunk_id),
                                dict(f.channel_scores)) for f in fused if (r := records.get(f.chunk_id)) is not None]


def _wait_quietly(finish: Callable[[], object]) -> None:
    try:
        finish()
    except Exception:
        log.debug("the semantic channel failed too", exc_info=True)


def _log_warm_up_failure(loading: Future[Vectors]) -> None:
    error = None if loading.cancelled() else loading.exception()
    if error is not None and not isinstance(error, EmbedderClosed):  # the first query will meet it too
        log.warning("loading the query embedding model failed", exc_info=error)


def _log_close_failure(closing: asyncio.Future[None]) -> None:
    if not closing.cancelled() and closing.exception() is not None:
        log.error("closing the search index failed", exc_info=closing.exception())


def _hit(rec: ChunkRecord, query: str, score: float, channels: dict[str, float]) -> SearchHit:
    return SearchHit(rec.id, rec.source, rec.title, rec.kind, snippet(rec.text, query), rec.text, score,
                     dict(channels))


def _upsert_file(file: Path, text: str, extractions: list[Extraction] | None) -> Callable[[SearchCore], Change]:
    return lambda core: core.index.upsert(str(file), text, title=file.stem, extractions=extractions)


class SearchEngine:
    """The async facade. Every operation runs on one dedicated worker thread that owns the SQLite connection.

    Args:
        path: the index database file (created when missing).
        embedder: the semantic channel's model; None leaves the channel out (its weight counts as 0).
        classifier: picks the query type and so the fusion weights; the rule-based one by default.
        chat_model: when given, entities and relations are extracted by the model (heuristics on failure).
    """

    def __init__(self, path: Path | str, *, embedder: Embedder | None = None,
                 classifier: QueryClassifier | None = None, chat_model: ChatModel | None = None,
                 fusion: FusionMethod = DEFAULT_FUSION, token_mode: TokenMode = "mixed",
                 extraction_concurrency: int = 4) -> None:
        self.path = Path(path)
        self.classifier: QueryClassifier = classifier or RuleBasedClassifier()
        self.chat_model = chat_model
        self._executor = DaemonWorkerExecutor("search-index")
        self._core: SearchCore | None = None
        self._embedder = embedder
        self._fusion: FusionMethod = fusion
        self._token_mode: TokenMode = token_mode
        self._extraction_limit = asyncio.Semaphore(extraction_concurrency)
        self._closed = False

    async def _run(self, fn: Callable[[SearchCore], T]) -> T:
        if self._closed:
            raise RuntimeError("the search engine is closed")

        def call() -> T:
            if self._core is None:
                self._core = SearchCore(self.path, self._embedder, token_mode=self._token_mode,
                                        fusion=self._fusion)
            return fn(self._core)

        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    @property
    def generation(self) -> int:
        """How many writes the index has had since it was opened (0 before): what was searched before a write may
        miss what it wrote (read from any thread: an int, bumped by the index's one thread)."""
        return self._core.index.generation if self._core is not None else 0

    async def open(self) -> None:
        """Opens (and creates or migrates) the database, embedding chunks that lack vectors."""
        await self._run(lambda core: None)

    async def aclose(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Closes the index once the job in progress is done, waiting ``wait_s`` at most: a file half-way through
        its embeddings may take seconds, and the app must not wait for it (the transaction is rolled back). The
        embedder is told first (its job in progress ends at its next step), and both are waited for at once."""
        if self._closed:
            return
        self._closed = True
        waits: list[asyncio.Future[None]] = []
        if self._embedder is not None:  # see E5Embedder.close: it stops the index thread's embedding
            waits.append(asyncio.ensure_future(asyncio.to_thread(self._embedder.close)))

        def close() -> None:
            if self._core is not None:
                self._core.close()
                self._core = None

        closing = asyncio.get_running_loop().run_in_executor(self._executor, close)
        closing.add_done_callback(_log_close_failure)
        waits.append(closing)
        self._executor.shutdown(wait=False)
        _, pending = await asyncio.wait([asyncio.shield(w) for w in waits], timeout=wait_s)
        if pending:
            log.info("the search index is busy with a file; it closes when the file is done or the app exits")

    # -- indexing ---------------------------------------------------------------------------------------------
    async def _extractions(self, text: str) -> list[Extraction] | None:
        if self.chat_model is None:
            return None
        model = self.chat_model

        async def one(chunk: str) -> Extraction:
            async with self._extraction_limit:
                return await extract_with_model(model, chunk)

        return list(await asyncio.gather(*(one(c) for c in split_chunks(text))))

    async def index_text(self, source: str, text: str, *, title: str | None = None) -> Change:
        """Indexes a text under ``source`` (a path or URI), replacing what was there if it changed."""
        extractions = await self._extractions(text)
        return await self._run(lambda c: c.index.upsert(source, text, title=title, kind="text",
                                                        extractions=extractions))

    async def index_paths(self, paths: Sequence[Path | str], *,
                          progress: IndexProgress | None = None) -> dict[str, Change]:
        """Indexes text files and folders; files deleted from an indexed folder are forgotten.

        ``progress(done, total, current)`` is called on the event loop (never from the worker thread) before each
        new or changed file, with that file as ``current``, and once at the end with ``done == total`` and no
        file; ``total`` counts only the files that need indexing (unchanged ones cost nothing).
        """
        # One executor call per file: cancelling (the app closing) waits for one file at most, not the whole pass.
        todo, changes = await self._run(lambda c: c.index.pending_files([Path(p) for p in paths]))
        for done, (file, text) in enumerate(todo):  # only new or changed files cost model calls
            if progress is not None:
                progress(done, len(todo), str(file))
            extractions = await self._extractions(text)
            changes[str(file)] = await self._run(_upsert_file(file, text, extractions))
        if progress is not None:
            progress(len(todo), len(todo), "")
        return changes

    async def index_conversation(self, conversation_id: str, lines: Sequence[IndexedLine]) -> Change:
        """Indexes (or re-indexes) one conversation, each line a chunk of its own with its message id, speaker and
        time (long-term recall finds lines); an empty one leaves the index."""
        return await self.index_lines(f"conversation:{conversation_id}", f"conversation {conversation_id}",
                                      lines)

    async def index_lines(self, source: str, title: str, lines: Sequence[IndexedLine], *,
                          kind: DocKind = "conversation") -> Change:
        """Indexes (or re-indexes) a document of ``lines``, each a chunk of its own (a conversation; a note about
        the user, app/memory/notes.py); an empty one leaves the index."""
        if not lines:
            return await self._run(lambda c: c.index.remove(source))
        text = "\n\n".join(f"{line.message_id}\t{line.speaker}\t{line.at}\t{line.text}" for line in lines)
        extractions = None
        if self.chat_model is not None:
            model = self.chat_model

            async def one(line: IndexedLine) -> Extraction:
                async with self._extraction_limit:
                    return await extract_with_model(model, line.text)

            extractions = list(await asyncio.gather(*(one(line) for line in lines)))
        return await self._run(lambda c: c.index.upsert_many([Upsert(source, text, title, kind, extractions,
                                                                     lines)])[0])

    async def remove(self, source: str) -> Change:
        return await self._run(lambda c: c.index.remove(source))

    async def forget_folder(self, folder: Path) -> dict[str, Change]:
        """Removes the documents of every file under ``folder`` from the index."""
        return await self._run(lambda c: c.index.forget_folder(folder))

    async def stats(self) -> dict[str, int]:
        return await self._run(lambda c: c.index.stats())

    async def prepare(self) -> None:
        """Starts loading the query embedding model in the background, so that the first search need not wait for
        it (about a second). Returns once the load is requested, not loaded: after the index thread's current job
        (a file being indexed, say), like any call here. The search panel calls it when the user starts typing."""
        await self._run(lambda c: c.prepare_query_embedding())

    # -- searching --------------------------------------------------------------------------------------------
    async def classify(self, text: str) -> QueryClassification:
        return await self.classifier.classify(text)

    async def search(self, text: str, *, limit: int = 10, classification: QueryClassification | None = None,
                     method: FusionMethod | None = None) -> SearchResponse:
        """Classifies ``text`` (unless given), runs the three channels and fuses them. Raises EmptyQueryError."""
        cls = classification or await self.classifier.classify(text)
        return await self._run(lambda c: c.search(text, cls, limit, method))

    async def recall_candidates(self, text: str, *, depth: int,
                                weights: dict[str, float] | None = None) -> list[RecallCandidate]:
        """Candidates for long-term recall (see :meth:`SearchCore.recall_candidates`). Raises EmptyQueryError.
        With ``weights`` given the rules classify (the classification only routes the graph channel): a language
        model asked here put a request, and a cold prompt, ahead of every companion's line."""
        if weights is not None and not weights.get("graph") and text.strip():
            cls = QueryClassification(type="local", confidence=1.0)  # routes nothing: the graph channel is left out
        else:
            cls = await (RuleBasedClassifier() if weights is not None else self.classifier).classify(text)
        return await self._run(lambda c: c.recall_candidates(text, cls, depth, weights))

    async def communities(self) -> list[CommunitySummary]:
        return await self._run(lambda c: c.graph.communities())
