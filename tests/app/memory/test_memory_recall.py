"""Long-term recall on real parts: the conversation database, the memory table and the search index (SQLite), an
imported conversation as the past. A companion recalls only what it heard, in its current words, dated; nothing
when the user turned its memory off; knowledge passages only when its card may search."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from app.conversations.transfer import ConversationImporter, ImportReport, TransferConversation
from app.memory.recall import Found, MemoryRecall, ranked
from app.memory.store import SqliteMemoryStore
from app.storage.database import ConversationStore
from companions.memory.context import CompanionMemory
from companions.memory.recall import CompanionRecall, MemoryRecalled, RecalledItem, recall_block
from companions.search.engine import RecallCandidate, SearchEngine
from companions.search.index import IndexedLine
from companions.search.semantic import EmbedderClosed, Vectors
from companions.search.tool import TextSearch
from companions.wire.protocol import Message
from tests.companions.search_doubles import HashingEmbedder

MAY_8 = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)


class Parts:
    def __init__(self, store: ConversationStore, memory: SqliteMemoryStore, engine: SearchEngine) -> None:
        self.store, self.memory, self.engine = store, memory, engine
        self.memory_on = {"akari": True, "hina": True, "souta": True}
        self.recall = MemoryRecall(engine, memory, enabled=lambda c: self.memory_on[c],
                                   knowledge=lambda c: c == "souta")
        self.importer = ConversationImporter(store, memory, engine, user_id="taro",
                                             names={"akari": "Akari", "hina": "Hina", "souta": "Souta"})

    async def add(self, *messages: tuple[str, str, list[str], str], start: dt.datetime = MAY_8) -> int:
        """Imports a conversation of (id, from, to, text), a minute apart from ``start`` (8 May 2023)."""
        conversation = TransferConversation.model_validate({"title": "past", "messages": [
            {"id": mid, "from": sender, "to": to, "message": text,
             "time": (start + dt.timedelta(minutes=n)).isoformat()}
            for n, (mid, sender, to, text) in enumerate(messages)]})
        report = ImportReport()
        conversation_id = await self.importer.add(conversation, report)
        assert conversation_id is not None
        assert not report.problems
        return conversation_id

    async def texts(self, companion: str, query: str) -> list[str]:
        return [item.text for item in await self.recall.recall(companion, query, limit=10)]


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[Parts]:
    store = ConversationStore(tmp_path / "madoi.sqlite3")
    await store.open()
    memory = SqliteMemoryStore(tmp_path / "madoi.sqlite3")
    engine = SearchEngine(tmp_path / "search.sqlite3", embedder=HashingEmbedder())
    try:
        yield Parts(store, memory, engine)
    finally:
        await engine.aclose()
        memory.close()
        await store.close()


async def test_a_companion_recalls_only_the_lines_it_heard(parts: Parts) -> None:
    await parts.add(("m1", "user", [], "My cat is called Mochi and she sleeps all day"),
                    ("m2", "user", ["hina"], "Only between us: my cat Mochi bit the vet"),
                    ("m3", "akari", ["user"], "Mochi is a lovely name for a cat"))
    akari = await parts.texts("akari", "What is the name of my cat?")
    assert "My cat is called Mochi and she sleeps all day" in akari
    assert "Mochi is a lovely name for a cat" in akari  # its own line
    assert "Only between us: my cat Mochi bit the vet" not in akari  # said to Hina alone
    hina = await parts.texts("hina", "What is the name of my cat?")
    assert "Only between us: my cat Mochi bit the vet" in hina
    assert "Mochi is a lovely name for a cat" not in hina  # Akari answered the user, not everyone
    # A companion's search tool reads the user's documents, not the conversations (recall brings what it heard).
    assert "Only between us" not in await TextSearch(parts.engine).search("Mochi bit the vet")


async def test_a_conversation_imported_just_after_a_question_is_recalled_when_it_is_asked_again(parts: Parts) -> None:
    await parts.add(("m1", "user", [], "My cat is called Mochi"), ("m2", "akari", ["user"], "What a sweet name"))
    assert "My dog eats carrots every morning" not in await parts.texts("akari", "What does my dog eat?")
    # Every companion hearing one message shares one search for a few seconds; a new conversation indexed in the
    # meantime is not left out of the next question's search.
    await parts.add(("m3", "user", [], "My dog eats carrots every morning"), ("m4", "akari", ["user"], "Crunchy!"))
    assert "My dog eats carrots every morning" in await parts.texts("akari", "What does my dog eat?")


async def test_recalled_lines_are_dated_and_say_who_said_them(parts: Parts) -> None:
    await parts.add(("m1", "user", [], "I ran a charity race for mental health on Sunday"),
                    ("m2", "akari", [], "A charity race! I am proud of you"))
    items = await parts.recall.recall("akari", "When did I run the charity race?", limit=10)
    assert [i.message_id for i in items][:2] == ["m1", "m2"] or [i.message_id for i in items][:2] == ["m2", "m1"]
    first = next(i for i in items if i.message_id == "m1")
    assert first.time_iso == "2023-05-08T13:56:00Z"
    assert first.speaker_id == "taro"
    assert all(i.imported for i in items)  # said elsewhere: whoever the file names, nobody said it here
    block, shown = recall_block(items, companion_id="akari", language="en", budget_tokens=300)
    assert len(shown) == 2
    assert "On 8 May 2023, in an imported conversation, taro said: \"I ran a charity race" in block
    assert 'in an imported conversation, Akari said: "A charity race!' in block
    japanese, _ = recall_block(items, companion_id="akari", language="ja", budget_tokens=300)
    assert "2023年5月8日、取り込んだ会話でAkariが「A charity race! I am proud of you」と言いました。" in japanese
    # The same lines heard and said in this app.
    live = [i.model_copy(update={"imported": False}) for i in items]
    block, _ = recall_block(live, companion_id="akari", language="en", budget_tokens=300)
    assert "On 8 May 2023, taro said: \"I ran a charity race" in block
    assert 'you said: "A charity race!' in block
    japanese, _ = recall_block(live, companion_id="akari", language="ja", budget_tokens=300)
    assert "2023年5月8日、あなたは「A charity race! I am proud of you」と言いました。" in japanese


async def test_an_edited_or_deleted_message_is_never_recalled_in_its_old_form(parts: Parts) -> None:
    conversation = await parts.add(("h1", "akari", [], "Hello!"), ("h2", "hina", [], "Hi there"),
                                   ("m1", "user", [], "My sister lives in Sapporo near the clock tower"),
                                   ("m2", "user", [], "My brother lives in Fukuoka near the harbour"))
    assert "My sister lives in Sapporo near the clock tower" in await parts.texts("akari", "Where does my sister live?")
    # What Conversations.revise does: the stored message and each companion's memory follow at once; the index
    # catches up later (the conversation indexer), and recall must not wait for it.
    await parts.store.revise_message(conversation, "m1", "My sister lives in Kyoto near the river")
    await parts.store.revise_message(conversation, "m2", None)
    for companion in ("akari", "hina"):
        memory = CompanionMemory(companion, store=parts.memory)
        await memory.revise("m1", "My sister lives in Kyoto near the river")
        await memory.revise("m2", None)
    recalled = await parts.texts("akari", "Where do my sister and my brother live?")
    assert not any("Sapporo" in t or "Fukuoka" in t for t in recalled)
    assert "My sister lives in Kyoto near the river" in recalled


async def test_memory_off_recalls_nothing_and_forgetting_is_immediate(parts: Parts) -> None:
    await parts.add(("h1", "akari", [], "Hello!"), ("h2", "hina", [], "Hi there"),
                    ("m1", "user", [], "I am allergic to peanuts"), ("m2", "user", [], "I love green tea"))
    assert "I am allergic to peanuts" in await parts.texts("hina", "Am I allergic to anything?")
    parts.memory_on["hina"] = False
    assert await parts.texts("hina", "Am I allergic to anything?") == []
    parts.memory_on["hina"] = True
    assert await parts.memory.forget_messages("hina", ["m1"]) == 1
    assert "I am allergic to peanuts" not in await parts.texts("hina", "Am I allergic to anything?")
    assert "I am allergic to peanuts" in await parts.texts("akari", "Am I allergic to anything?")  # Akari still does
    await parts.memory.forget_companion("akari")
    assert await parts.texts("akari", "Am I allergic to anything? green tea Hello") == []


async def test_knowledge_folders_are_recalled_by_a_companion_that_may_search(parts: Parts, tmp_path: Path) -> None:
    folder = tmp_path / "knowledge"
    folder.mkdir()
    (folder / "cat.txt").write_text("Our cat is called Mochi. She is a white Scottish Fold.", encoding="utf-8")
    await parts.engine.index_paths([folder])
    souta = await parts.recall.recall("souta", "Souta, what is the name of my cat?", limit=5)
    assert souta[0].kind == "knowledge"
    assert "Mochi" in souta[0].text
    assert souta[0].source.endswith("cat.txt")
    block, _ = recall_block(souta, companion_id="souta", language="en")
    assert "From your documents (cat.txt): Our cat is called Mochi." in block
    assert await parts.recall.recall("akari", "Akari, what is the name of my cat?", limit=5) == []


async def test_the_companion_side_recalls_once_per_message_and_tells_what_it_recalled(parts: Parts) -> None:
    await parts.add(("h1", "akari", [], "Hello!"), ("m1", "user", [], "Next month I am moving to Osaka for a new job"))
    told: list[MemoryRecalled] = []
    calls: list[str] = []

    class Counting:
        async def recall(self, companion_id: str, text: str, **kwargs: object) -> list[RecalledItem]:
            calls.append(text)
            return await parts.recall.recall(companion_id, text, **kwargs)  # type: ignore[arg-type]

    recall = CompanionRecall("akari", Counting(), publish=told.append)
    question = Message.create(from_="taro", message="Where am I moving next month?", to=[])
    assert recall.block_for(question, "en") == ""  # nothing before it was recalled
    recall.prepare_soon(question)
    await recall.ready(question)
    await recall.ready(question)  # the reply after the vote: no second search
    assert len(calls) == 1
    block = recall.block_for(question, "en")
    assert '"Next month I am moving to Osaka for a new job"' in block
    recall.block_for(question, "en")
    assert [t.message_id for t in told] == [question.params.id]
    assert told[0].items[0].message_id == "m1"
    await recall.aclose()


class ClosedEmbedder(HashingEmbedder):
    """The app's embedder once the search engine closed it (app/search/embedding.py): every query raises."""

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        raise EmbedderClosed("the embedding model is closed")


async def test_a_recall_when_the_app_closes_recalls_nothing_and_logs_no_error(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Seen in the bundle's headless run: a companion recalling for the last message while the app stopped logged
    # "memory-recall: task recall-search failed" with an EmbedderClosed traceback.
    store = ConversationStore(tmp_path / "madoi.sqlite3")
    await store.open()
    memory = SqliteMemoryStore(tmp_path / "madoi.sqlite3")
    engine = SearchEngine(tmp_path / "search.sqlite3", embedder=ClosedEmbedder())
    try:
        recall = MemoryRecall(engine, memory)
        assert await recall.recall("akari", "What is the name of my cat?") == []
        assert await recall.recall("akari", "What is the name of my cat?") == []  # not a failed search shared
        await recall.tasks.wait()
    finally:
        await engine.aclose()
        memory.close()
        await store.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_question_naming_a_day_recalls_what_was_said_about_that_day(parts: Parts) -> None:
    # The same words on two evenings: "last night", said on 2 May, is 1 May, the day the question asks about
    for day, ident in ((dt.datetime(2023, 6, 20, 9, 0, tzinfo=dt.UTC), "june"),
                       (dt.datetime(2023, 5, 2, 9, 0, tzinfo=dt.UTC), "may")):
        await parts.add((f"{ident}-hi", "akari", [], "Hello!"),
                        (ident, "user", [], "I watched a film last night, what a film"), start=day)
    first = await parts.recall.recall("akari", "What film did I watch on 1 May, 2023?", limit=10)
    assert first[0].message_id == "may"
    first = await parts.recall.recall("akari", "What film did I watch on 19 June 2023?", limit=10)
    assert first[0].message_id == "june"


async def test_a_line_from_a_conversation_about_the_matter_outranks_a_stray_line_sharing_a_word(
        parts: Parts) -> None:
    # "Which trail did I find?": the chat about hiking, not a line about shoes that happens to say "trail"
    await parts.add(("h1", "user", [], "We went hiking in the hills on Sunday"),
                    ("h2", "akari", [], "Hiking in the hills sounds lovely"),
                    ("h3", "user", [], "I found a trail by the lake"),
                    ("h4", "akari", [], "A hiking trail by a lake, how nice"),
                    start=dt.datetime(2023, 3, 1, 9, 0, tzinfo=dt.UTC))
    await parts.add(("s0", "akari", [], "Hello again!"),
                    ("s1", "user", [], "These trail shoes are tight"),
                    start=dt.datetime(2023, 4, 1, 9, 0, tzinfo=dt.UTC))
    recalled = [i.message_id for i in await parts.recall.recall("akari", "Which trail did I find?", limit=10)]
    assert recalled[:3] == ["h3", "h4", "s1"], recalled  # both lines about the trail by the lake first



async def test_a_question_finds_a_line_that_says_its_words_in_another_form(parts: Parts) -> None:
    # "Where did I go camping?": the line says "camped", which the keyword index does not match
    await parts.add(("c1", "user", [], "We camped by the lake all weekend"),
                    ("c2", "akari", [], "The lake sounds lovely"),
                    start=dt.datetime(2023, 7, 1, 9, 0, tzinfo=dt.UTC))
    await parts.add(("o1", "user", [], "I want to see a film later"),
                    ("o2", "akari", [], "Shopping took all day"),
                    start=dt.datetime(2023, 8, 1, 9, 0, tzinfo=dt.UTC))
    recalled = [i.message_id for i in await parts.recall.recall("akari", "Where did I go camping?", limit=10)]
    assert recalled[:1] == ["c1"], recalled


def test_of_two_lines_as_close_to_the_question_the_one_that_tells_comes_first() -> None:
    # "What did Taro bake?": Akari asked it once; Taro's answer is what tells
    def found(chunk: int, mid: str, speaker: str, text: str) -> Found:
        line = IndexedLine(mid, speaker, MAY_8.timestamp(), f"{speaker}: {text}")
        candidate = RecallCandidate(chunk, 0.8, "conversation", "conversation:1", line.text, line,
                                    {"keyword": 2.0, "semantic": 0.9})
        return Found(candidate, "line", mid, text, line.at, speaker, speaker.title())

    lines = [found(1, "q", "akari", "Which cake did you bake for the fair?"),
             found(2, "a", "taro", "A lemon cake I baked for the fair")]
    assert [i.message_id for i in ranked("What cake did Taro bake for the fair?", lines, set())] == ["a", "q"]
