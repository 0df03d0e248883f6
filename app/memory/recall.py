"""Long-term recall on the app's one search index: the :class:`~companions.memory.recall.Recall` port's adapter.

One recall is one hybrid search of the index the Search panel uses (keyword and semantic fused:
``SearchEngine.recall_candidates``, ``SEARCH_DEPTH`` chunks read, ``RECALL_DEPTH`` ranked), then one lookup in the
memory table (``SqliteMemoryStore.heard``): a conversation line is recalled only when this companion heard or said it,
in the words the memory table holds now (an edited message as edited; a deleted or forgotten one not at all, even
before the index has caught up). Notes about the user (app/memory/notes.py) are recalled by the companion that wrote
them; passages of the knowledge folders by a companion whose card may ``search``. No language model is asked.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import functools
import logging
import re
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from app.memory.notes import NOTE_SOURCE_PREFIX, NotesStore, NoteWriter
from app.memory.store import SqliteMemoryStore
from companions.common.tasks import TaskSet
from companions.memory import matching, timeline
from companions.memory.recall import DEFAULT_BUDGET_TOKENS, CompanionRecall, RecalledItem, RecalledKind, recall_block
from companions.search.classify.query_classifier import EmptyQueryError
from companions.search.engine import RecallCandidate, SearchEngine
from companions.search.semantic import EmbedderClosed

if TYPE_CHECKING:
    from app.settings.model import Settings
    from companions.cards.card import CompanionCard
    from companions.companion.cast import CompanionCast
    from companions.wire.bus import Bus

log = logging.getLogger(__name__)
SHARED_SEARCHES: Final = 4  # the last searches kept for the other companions that recall for the same message
SHARED_FOR_S: Final = 5.0  # ... for this long

BUDGET_ITEMS: Final = 40  # items ranked for the prompt's budget at most (300 tokens hold about ten)
RECALL_DEPTH: Final = 150  # fused candidates ranked per recall (LoCoMo, even half: 100 0.750, 150 0.755, 200 0.757)
# Fused candidates read (each ranked, its neighbours found among them). At 100,000 lines each 50 more cost ~2 ms of
# a recall (more vectors rescored, rows read, lines looked up and ranked): 200/150/120/100 took 30.2/25.9/23.7/23.3
# ms p50 (the same questions in turn, load 2) for recall@10 0.779/0.774/0.768/0.760 on LoCoMo's five conversations.
SEARCH_DEPTH: Final = 150
SPEAKER_BOOST: Final = 1.0  # added to the lines of the one speaker a query names (scores are in [0, 1]; was 0.5)
NEIGHBOUR_SHARE: Final = 0.5  # of the better neighbouring line's score, added to a line's
SEMANTIC_FLOOR: Final = 0.82  # below it, a line that shares no telling word with the query is never recalled
SEMANTIC_MARGIN: Final = 0.02  # ... nor one this much further from the query than the closest (semantic_floor())
DATE_BOOST: Final = 0.4  # added to a line about a day in the time the query names (time_boosts())
SESSION_SHARE: Final = 0.2  # of the best other item of the same conversation, added to an item's (with_support())
# The last five chosen together on LoCoMo's even-numbered questions (bench/memory_recall.py; docs/measurements.md):
# 0.709 -> 0.755 there, 0.721 -> 0.755 on the odd ones. Tried and left out (even half, from 0.709): a discount per
# item already taken from the same conversation (0.05: 0.692), the query vector moved towards the first hits'
# (pseudo-relevance feedback: 0.684-0.701), a bonus for lines saying when to a question asking when (+0.000).
# Measured on LoCoMo (bench/memory_recall.py): lines are found best by words and meaning alike; the graph channel's
# entities (the two people's names, in every question) add little.
RECALL_WEIGHTS: Final = {"keyword": 0.5, "semantic": 0.5, "graph": 0.0}
WORD_SHARE: Final = 0.5  # times the share of the query's words a line holds in any form (matching.shared_words)
ASKING_SHARE: Final = 0.9  # of its own score, for a line that asks: its answer, next to it, tells
# The last two chosen on the even half from 0.757 (the words compared in any form, matching.telling_words):
# WORD_SHARE 0.3/0.5/0.7/1.0 with ASKING_SHARE 0.9: 0.781/0.782/0.779/0.776; ASKING_SHARE 0.7/0.8/0.9/1.0 with
# WORD_SHARE 0.5: 0.776/0.778/0.782/0.766. Odd half 0.755 -> 0.775; multi-hop 0.399 -> 0.455. A line that asks
# (29% of the ten recalled, 9% of the evidence lines) sounds like the question whatever it asks about.
# Tried and left out (with both): a discount per item already taken from the same conversation (0.05: 0.771, 0.1:
# 0.760), the named speaker's name left out of the words compared (0.770).


class MemoryRecall:
    """Recall for every companion of the app (``enabled``: the user's switch per companion; ``knowledge``: whether
    a companion may search the knowledge folders)."""

    def __init__(self, engine: SearchEngine, memory: SqliteMemoryStore, *,
                 enabled: Callable[[str], bool] = lambda _id: True,
                 knowledge: Callable[[str], bool] = lambda _id: False,
                 budget_tokens: Callable[[], int] = lambda: DEFAULT_BUDGET_TOKENS,
                 language: Callable[[], str] = lambda: "en", depth: int = RECALL_DEPTH,
                 notes: NotesStore | None = None) -> None:
        self.engine = engine
        self.memory = memory
        self.notes = notes  # notes about the user (app/memory/notes.py), when they are kept
        self.enabled = enabled
        self.knowledge = knowledge
        self.budget_tokens = budget_tokens
        self.language = language
        self.depth = depth
        self.last_ms = 0.0  # how long the last recall took (the command reports it)
        # Every companion that hears a message recalls for it: one search serves them all (who heard what differs).
        self._searches: collections.OrderedDict[tuple[str, int], tuple[float, asyncio.Task[list[RecallCandidate]]]] \
            = collections.OrderedDict()  # by the text and the index's generation
        self.tasks = TaskSet("memory-recall")  # the shared searches (each awaited by the recalls that share it)

    async def recall(self, companion_id: str, text: str, *, before: float | None = None, limit: int | None = None,
                     exclude: Collection[str] = ()) -> list[RecalledItem]:
        started = time.perf_counter()
        try:
            if not self.enabled(companion_id) or not text.strip():
                return []
            try:
                candidates = await self._search(text)
            except EmptyQueryError:
                return []
            items = await self._allowed(companion_id, text, candidates, before=before, exclude=exclude,
                                        keep=limit if limit is not None else BUDGET_ITEMS)
            if limit is not None:
                return items[:limit]
            _, kept = recall_block(items, companion_id=companion_id, language=self.language(),
                                   budget_tokens=self.budget_tokens())
            return list(kept)
        finally:
            self.last_ms = (time.perf_counter() - started) * 1000

    async def _search(self, text: str) -> list[RecallCandidate]:
        """One search per text for the companions hearing the same message, while the index is as it was (a few
        seconds at most): a line or a conversation indexed since is searched for (measured: a conversation imported
        between two askings of one question was left out of the second)."""
        now = time.monotonic()
        key = (text, self.engine.generation)
        shared = self._searches.get(key)
        if shared is not None and now - shared[0] <= SHARED_FOR_S and not failed(shared[1]):
            return await asyncio.shield(shared[1])
        search = self.tasks.spawn(self._candidates(text), name="recall-search")
        self._searches[key] = (now, search)
        self._searches.move_to_end(key)
        while len(self._searches) > SHARED_SEARCHES:
            self._searches.popitem(last=False)
        return await asyncio.shield(search)

    async def _candidates(self, text: str) -> list[RecallCandidate]:
        try:
            return await self.engine.recall_candidates(text, depth=SEARCH_DEPTH, weights=RECALL_WEIGHTS)
        except EmbedderClosed:
            return []  # the app is closing (the search engine closed under a recall in flight): nothing to recall

    async def _allowed(self, companion_id: str, text: str, candidates: list[RecallCandidate], *,
                       before: float | None, exclude: Collection[str], keep: int) -> list[RecalledItem]:
        """The candidates this companion may recall, best first (:func:`ranked`), as they stand in its memory now."""
        own_notes = f"{NOTE_SOURCE_PREFIX}{companion_id}:"
        note_ids = [int(c.source.rsplit(":", 1)[1]) for c in candidates if c.source.startswith(own_notes)]
        cited = await self.notes.sources(note_ids) if self.notes is not None and note_ids else {}
        heard = await self.memory.heard(companion_id, [
            *(c.line.message_id for c in candidates if c.line is not None and c.kind == "conversation"),
            *(source for sources in cited.values() for source in sources)])
        may_search = self.knowledge(companion_id)
        found: list[Found] = []
        seen: set[str] = set()
        for c in candidates:
            if c.source.startswith(NOTE_SOURCE_PREFIX):  # a note, indexed as a line of its own
                sources = cited.get(int(c.source.rsplit(":", 1)[1])) if c.source.startswith(own_notes) else None
                # Only while this companion still remembers every line the note came from.
                if (sources is not None and c.line is not None and all(s in heard for s in sources)
                        and (before is None or c.line.at < before)):
                    # A note written from an imported line carries that line's words: imported too.
                    found.append(Found(c, "note", c.line.message_id, c.text, c.line.at, companion_id, "", sources,
                                       imported=any(heard[s].entry.imported for s in sources)))
            elif c.line is not None:
                line = heard.get(c.line.message_id)
                if line is None or c.line.message_id in exclude or c.line.message_id in seen:
                    continue  # not heard by this companion, forgotten, deleted, or in its context already
                if before is not None and line.entry.at >= before:
                    continue
                seen.add(c.line.message_id)
                entry = line.entry
                found.append(Found(c, "line", entry.message_id, entry.text, entry.at, entry.speaker_id,
                                   entry.speaker_name, imported=entry.imported))
            elif c.kind == "file" and may_search:
                found.append(Found(c, "knowledge", c.source, c.text, None))
        return ranked(text, found, named_speakers(text, found), pool=self.depth, keep=keep)


@dataclass(slots=True)
class Found:
    """A candidate this companion may recall, as its memory holds it now (made into a RecalledItem if kept)."""

    candidate: RecallCandidate
    kind: RecalledKind
    message_id: str
    text: str
    at: float | None
    speaker_id: str = ""
    speaker_name: str = ""
    sources: tuple[str, ...] = ()
    imported: bool = False

    def item(self, score: float) -> RecalledItem:
        return RecalledItem(kind=self.kind, message_id=self.message_id, text=self.text, at=self.at, score=score,
                            speaker_id=self.speaker_id, speaker_name=self.speaker_name,
                            source=self.candidate.source, sources=self.sources, imported=self.imported)


def failed(task: asyncio.Task[list[RecallCandidate]]) -> bool:
    """Whether a shared search ended without candidates to share (cancelled or failed)."""
    return task.done() and (task.cancelled() or task.exception() is not None)


def relevant(candidate: RecallCandidate, words: frozenset[str], query: frozenset[str], floor: float) -> bool:
    """Whether a candidate shares a telling word with the query (``words`` and ``query``, by
    :func:`~companions.memory.matching.telling_words`, in any of their forms; the speaker's name, written before
    each indexed line, does not count) or is about as close in meaning as the closest candidate (``floor``)."""
    return candidate.channel_scores.get("semantic", 0.0) >= floor or not query.isdisjoint(words)


def semantic_floor(found: Sequence[Found]) -> float:
    """The cosine an item needs to count as close in meaning without a shared word: within ``SEMANTIC_MARGIN`` of the
    closest candidate's, and at least ``SEMANTIC_FLOOR``. e5's cosines crowd together (English lines unrelated to a
    question 0.77-0.80 against 0.87 for the answer; Japanese ones 0.82-0.84 against 0.86), so only a margin from
    the best tells them apart; on LoCoMo it also raised recall@10 (0.706 -> 0.713: fewer strays among the ten)."""
    best = max((f.candidate.channel_scores.get("semantic", 0.0) for f in found), default=0.0)
    return max(SEMANTIC_FLOOR, best - SEMANTIC_MARGIN)


def named_speakers(text: str, items: Sequence[Found]) -> set[str]:
    """The speakers (ids) of ``items`` that ``text`` names, by name or id (a whole word; CJK names anywhere)."""
    named: set[str] = set()
    for speaker, name in {(i.speaker_id, i.speaker_name) for i in items if i.kind == "line"}:
        for word in {speaker, name} - {""}:
            pattern = re.escape(word) if re.search(r"[^\x00-\u024f]", word) else rf"(?<!\w){re.escape(word)}(?!\w)"
            if re.search(pattern, text, re.IGNORECASE):
                named.add(speaker)
    return named


def ranked(query: str, found: Sequence[Found], named: set[str], *,
           pool: int = RECALL_DEPTH, keep: int = RECALL_DEPTH) -> list[RecalledItem]:
    """The best ``keep`` of the first ``pool`` items, best first: the fused score, plus ``SPEAKER_BOOST`` for a line
    of the one speaker the query names ("What did Caroline research?": Caroline's lines), plus ``WORD_SHARE`` of
    the share of the query's words the line holds in any form (companions/memory/matching.py: "camped" finds
    "camping", which the keyword channel does not), plus ``NEIGHBOUR_SHARE`` of the better of the line's two
    neighbours in its conversation (an answer "Yes, last Sunday" is found through the question before it), plus
    :func:`time_boosts` when the query names a time; a line that asks counts ``ASKING_SHARE`` of its own score; an
    item neither :func:`relevant` itself nor next to a relevant line is left out; then :func:`with_support`.
    Measured on LoCoMo (bench/memory_recall.py, docs/ARCHITECTURE.md "Memory")."""
    said = {f.candidate.chunk_id: matching.telling_words(f.text) for f in found}
    asked = matching.telling_words(query)
    shares = matching.shared_words(asked, said)
    base = {f.candidate.chunk_id: f.candidate.score + WORD_SHARE * shares.get(f.candidate.chunk_id, 0.0)
            + (SPEAKER_BOOST if len(named) == 1 and f.speaker_id in named else 0.0) for f in found}
    by_chunk = {f.candidate.chunk_id: f.candidate for f in found}

    def neighbour(c: RecallCandidate) -> RecallCandidate | None:
        """The better of the lines just before and after ``c`` in its conversation (consecutive chunks)."""
        if c.line is None or c.source.startswith(NOTE_SOURCE_PREFIX):
            return None
        near = [n for n in (by_chunk.get(c.chunk_id - 1), by_chunk.get(c.chunk_id + 1))
                if n is not None and n.source == c.source]
        return max(near, key=lambda n: base[n.chunk_id], default=None)

    floor = semantic_floor(found)
    boosts = time_boosts(query, found[:pool])
    scored: list[tuple[float, Found]] = []
    for item in found[:pool]:
        c = item.candidate
        near = neighbour(c)
        if not relevant(c, said[c.chunk_id], asked, floor) and (
                near is None or not relevant(near, said[near.chunk_id], asked, floor)):
            continue
        own = base[c.chunk_id] * (ASKING_SHARE if matching.asks(item.text) else 1.0)
        scored.append((own + (NEIGHBOUR_SHARE * base[near.chunk_id] if near is not None else 0.0)
                       + boosts.get(c.chunk_id, 0.0), item))
    scored = with_support(scored)
    scored.sort(key=lambda pair: -pair[0])
    return [item.item(round(score, 6)) for score, item in scored[:keep]]


def time_boosts(query: str, found: Sequence[Found]) -> dict[int, float]:
    """``DATE_BOOST`` for each line whose days (its own, or those its words point to: "last night", said on 2 May,
    is 1 May) fall in a time the query names ("on 1 May, 2022", "in the week before 16 November 2023"; by
    companions/memory/timeline.py), by chunk id."""
    dated = {f.candidate.chunk_id: (f, dt.date.fromtimestamp(f.at)) for f in found
             if f.at is not None and f.kind != "knowledge"}
    if not dated:
        return {}
    days = [day for _, day in dated.values()]
    spans = timeline.asked(query, max(days), range(min(days).year, max(days).year + 1))
    if not spans:
        return {}
    return {chunk: DATE_BOOST for chunk, (f, day) in dated.items()
            if any(timeline.overlaps(timeline.talks_about(f.text, day), span) for span in spans)}


def with_support(scored: Sequence[tuple[float, Found]]) -> list[tuple[float, Found]]:
    """Each item's score plus ``SESSION_SHARE`` of the best other item of its conversation: a line in a
    conversation that talks about the question's matter elsewhere too is more likely about it than a stray line
    sharing a word."""
    if SESSION_SHARE <= 0:
        return list(scored)
    best: dict[str, list[float]] = {}
    for score, item in scored:
        top = best.setdefault(item.candidate.source, [])
        top.append(score)
        if len(top) > 2:
            top.sort(reverse=True)
            del top[2:]
    out = []
    for score, item in scored:
        top = sorted(best[item.candidate.source], reverse=True)
        other = top[1] if len(top) > 1 and top[0] == score else (top[0] if top[0] != score else 0.0)
        out.append((score + SESSION_SHARE * other, item))
    return out


def build_memory_recall(engine: SearchEngine, memory: SqliteMemoryStore, settings: Callable[[], Settings],
                        cards: Callable[[], dict[str, CompanionCard]], notes: NotesStore | None = None) -> MemoryRecall:
    """The app's recall: the user's switch per companion (``[companions.<id>] memory``), the budget
    (``conversation.recall_tokens``), and the knowledge folders for companions whose card may ``search``."""

    def may_search(companion_id: str) -> bool:
        card = cards().get(companion_id)
        return card is not None and "search" in card.knowledge

    return MemoryRecall(engine, memory, enabled=lambda companion: settings().companion(companion).memory,
                        knowledge=may_search, budget_tokens=lambda: settings().conversation.recall_tokens,
                        language=lambda: settings().general.language, notes=notes)


def companion_recall(recall: MemoryRecall, settings: Callable[[], Settings],
                     bus: Bus) -> Callable[[str], CompanionRecall]:
    """What gives each companion its recall on ``recall`` (the cast calls it for every companion it builds, one
    edited, imported or added while running too): the user's switch, the budget, and the recall events."""

    def recall_for(companion_id: str) -> CompanionRecall:
        return CompanionRecall(companion_id, recall, enabled=functools.partial(_memory_on, settings, companion_id),
                               budget_tokens=lambda: settings().conversation.recall_tokens, publish=bus.publish)

    return recall_for


def note_writer(notes: NotesStore, memory: SqliteMemoryStore, engine: SearchEngine, bus: Bus, cast: CompanionCast, *,
                settings: Callable[[], Settings], current: Callable[[], int | None]) -> NoteWriter:
    """The part that writes notes about the user (while ``conversation.memory_notes`` is on; the conversation
    indexer starts and stops it)."""
    return NoteWriter(notes, memory, engine, bus, cast, current=current,
                      enabled=lambda: settings().conversation.memory_notes,
                      memory_on=functools.partial(_memory_on, settings), user_id=lambda: settings().general.user_name,
                      language=lambda: settings().general.language)


def _memory_on(settings: Callable[[], Settings], companion_id: str) -> bool:
    return settings().companion(companion_id).memory
