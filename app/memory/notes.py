"""Notes about the user in the app: kept in the conversation database, found through the search index, written when
a conversation has ended and the model server is idle (companions/memory/notes.py), dropped with their lines.

* Store: ``memory_notes`` (one row per note: companion, conversation, text, kind, time, the cited message ids) and
  ``memory_notes_done`` (per companion and conversation, the last memory entry consolidated), beside the memory
  table in ``madoi.sqlite3`` (app/storage/schema.py).
* Index: each note is a document of one line in the search index (source ``note:<companion>:<id>``), so recall
  finds it by the same hybrid search as the lines (app/memory/recall.py), and only the companion that wrote it.
* Writing (:class:`NoteWriter`, a part the conversation indexer starts and stops): ``delay_s`` after a conversation
  ended, if nothing was said since, each companion whose memory is on writes notes from the lines it heard there
  that no earlier pass consolidated; only while ``conversation.memory_notes`` is on (off by default).
* A note never outlives its lines: an edited or deleted message (``MessageRevised``) and a line the user made a
  companion forget drop every note citing it (store and index); a deleted conversation drops its notes; recall
  keeps a note only while its companion still remembers every line it cites.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from app.conversations.active import MessageRevised
from app.memory.store import SqliteMemoryStore
from app.storage.schema import open_database
from companions.common.tasks import TaskSet
from companions.conversation.readmodel import ConversationChanged
from companions.memory.notes import Note, write_notes
from companions.search.engine import SearchEngine
from companions.search.index import IndexedLine
from companions.wire.bus import Bus, Subscription

if TYPE_CHECKING:
    from companions.companion.cast import CompanionCast

log = logging.getLogger(__name__)

NOTE_SOURCE_PREFIX: Final = "note:"  # a note's source in the index: note:<companion id>:<note id>
IDLE_DELAY_S: Final = 20.0  # after a conversation ended, before notes are written (the user may go on)


def note_source(companion_id: str, note_id: int) -> str:
    return f"{NOTE_SOURCE_PREFIX}{companion_id}:{note_id}"


class NotesStore:
    """The notes table (one SQLite connection, used from executor threads)."""

    def __init__(self, path: Path) -> None:
        self._conn = open_database(path)  # its tables: app/storage/schema.py
        self._lock = threading.Lock()
        with self._lock:
            # Notes of conversations deleted while the app was not running go at the next start.
            self._conn.execute("DELETE FROM memory_notes WHERE conversation_id IS NOT NULL AND conversation_id"
                               " NOT IN (SELECT id FROM conversations)")

    def _run(self, sql: str, args: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            return self._conn.execute(sql, tuple(args)).fetchall()

    async def add(self, notes: Sequence[Note]) -> list[int]:
        def write() -> list[int]:
            with self._lock:
                return [int(self._conn.execute(
                    "INSERT INTO memory_notes (companion_id, conversation_id, text, kind, at, sources) VALUES"
                    " (?, ?, ?, ?, ?, ?) RETURNING id", (n.companion_id, n.conversation, n.text, n.kind, n.at,
                                                         json.dumps(list(n.sources)))).fetchone()[0])
                        for n in notes]

        return await asyncio.to_thread(write)

    async def sources(self, note_ids: Collection[int]) -> dict[int, tuple[str, ...]]:
        """The message ids each of ``note_ids`` cites (notes gone are missing)."""
        ids = list(note_ids)
        if not ids:
            return {}
        rows = await asyncio.to_thread(self._run, f"SELECT id, sources FROM memory_notes WHERE id IN"
                                                  f" ({','.join('?' * len(ids))})", ids)
        return {int(str(r[0])): tuple(json.loads(str(r[1]))) for r in rows}

    async def of_companion(self, companion_id: str) -> list[tuple[int, Note]]:
        rows = await asyncio.to_thread(self._run, "SELECT id, conversation_id, text, kind, at, sources FROM"
                                                  " memory_notes WHERE companion_id = ? ORDER BY at DESC",
                                       (companion_id,))
        return [(int(str(r[0])), Note(companion_id, None if r[1] is None else int(str(r[1])), str(r[2]),
                                      "plan" if r[3] == "plan" else "preference" if r[3] == "preference" else "fact",
                                      float(str(r[4])), tuple(json.loads(str(r[5]))))) for r in rows]

    async def drop_citing(self, message_ids: Collection[str], companion_id: str | None = None) -> list[str]:
        """Drops the notes (of ``companion_id``, or anyone's) citing one of ``message_ids``; their index sources."""
        wanted = set(message_ids)
        sql, args = "SELECT id, companion_id, sources FROM memory_notes", []
        if companion_id is not None:
            sql, args = sql + " WHERE companion_id = ?", [companion_id]
        rows = await asyncio.to_thread(self._run, sql, args)
        gone = [(int(str(r[0])), str(r[1])) for r in rows if wanted & set(json.loads(str(r[2])))]
        for note_id, _ in gone:
            await asyncio.to_thread(self._run, "DELETE FROM memory_notes WHERE id = ?", (note_id,))
        return [note_source(companion, note_id) for note_id, companion in gone]

    async def drop(self, note_id: int) -> list[str]:
        """Drops one note; its index source (none when it was gone)."""
        rows = await asyncio.to_thread(self._run, "DELETE FROM memory_notes WHERE id = ? RETURNING companion_id",
                                       (note_id,))
        return [note_source(str(r[0]), note_id) for r in rows]

    async def drop_where(self, column: str, value: object) -> list[str]:
        """Drops the notes of one companion (``companion_id``) or one conversation (``conversation_id``)."""
        assert column in ("companion_id", "conversation_id")
        rows = await asyncio.to_thread(self._run, f"DELETE FROM memory_notes WHERE {column} = ? RETURNING id,"
                                                  " companion_id", (value,))
        await asyncio.to_thread(self._run, f"DELETE FROM memory_notes_done WHERE {column} = ?", (value,))
        return [note_source(str(r[1]), int(str(r[0]))) for r in rows]

    async def done_seq(self, companion_id: str, conversation: int) -> int:
        rows = await asyncio.to_thread(self._run, "SELECT seq FROM memory_notes_done WHERE companion_id = ? AND"
                                                  " conversation_id = ?", (companion_id, conversation))
        return int(str(rows[0][0])) if rows else 0

    async def set_done(self, companion_id: str, conversation: int, seq: int) -> None:
        await asyncio.to_thread(self._run, "INSERT OR REPLACE INTO memory_notes_done VALUES (?, ?, ?)",
                                (companion_id, conversation, seq))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class NoteWriter:
    """Writes notes when a conversation has ended and stayed quiet (see the module doc); keeps them with their
    lines. ``enabled`` reads the setting each time (it may change while running)."""

    name = "memory-notes"

    def __init__(self, store: NotesStore, memory: SqliteMemoryStore, engine: SearchEngine, bus: Bus,
                 cast: CompanionCast, *, current: Callable[[], int | None], enabled: Callable[[], bool],
                 memory_on: Callable[[str], bool], user_id: Callable[[], str], language: Callable[[], str],
                 delay_s: float = IDLE_DELAY_S) -> None:
        self.store = store
        self.memory = memory
        self.engine = engine
        self.bus = bus
        self.cast = cast
        self.current = current
        self.enabled = enabled
        self.memory_on = memory_on
        self.user_id = user_id
        self.language = language
        self.delay_s = delay_s
        self.tasks = TaskSet("memory-notes")
        self.written = 0  # passes that ran to their end (tests)
        self._pass: asyncio.Task[None] | None = None
        self._subscription: Subscription | None = None
        self._was_running = False

    async def start(self) -> None:
        self._subscription = self.bus.subscribe("events", self._on_event, name="memory-notes", maxsize=256)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        await self.tasks.aclose()
        self.store.close()

    async def _on_event(self, item: object) -> None:
        if isinstance(item, MessageRevised):  # an edited or deleted line takes its notes with it
            await self.forget(item.message_id)
        elif isinstance(item, ConversationChanged):
            running = item.view.status == "running"
            if running and self._pass is not None:
                self._pass.cancel()  # the user went on: notes wait for the next quiet moment
            conversation = self.current()
            if self._was_running and item.view.status == "ended" and conversation is not None and self.enabled():
                self._pass = self.tasks.spawn(self._after_quiet(conversation), name="memory-notes")
            self._was_running = running

    async def _after_quiet(self, conversation: int) -> None:
        await asyncio.sleep(self.delay_s)
        await self.write(conversation)

    async def write(self, conversation: int) -> list[Note]:
        """Each companion (memory on) writes notes from the lines of ``conversation`` it heard since the last pass."""
        written: list[Note] = []
        for companion in list(self.cast):
            if not self.memory_on(companion.id):
                continue
            done = await self.store.done_seq(companion.id, conversation)
            lines = [e for e in await self.memory.load(companion.id, conversation) if e.seq > done]
            if not lines:
                continue
            try:
                notes = await write_notes(companion.model, companion.id, conversation, lines,
                                          user_id=self.user_id(), user_name=self.user_id(), language=self.language())
            except Exception as exc:  # notes are a help: a model that fails writes none this time
                log.info("%s: writing notes failed: %s: %s", companion.id, type(exc).__name__, exc)
                continue
            for note_id, note in zip(await self.store.add(notes), notes, strict=True):
                await self.engine.index_lines(note_source(companion.id, note_id), f"note {note_id}", [
                    IndexedLine(f"note:{note_id}", companion.id, note.at, note.text)], kind="text")
            await self.store.set_done(companion.id, conversation, max(e.seq for e in lines))
            written += notes
        self.written += 1
        return written

    async def forget_note(self, note_id: int) -> None:
        """Drops one note (the user said forget it)."""
        for source in await self.store.drop(note_id):
            await self.engine.remove(source)

    async def forget(self, message_id: str, companion_id: str | None = None) -> None:
        """Drops the notes citing ``message_id`` (of one companion, or anyone's) from the store and the index."""
        for source in await self.store.drop_citing({message_id}, companion_id):
            await self.engine.remove(source)

    async def forget_all(self, column: str, value: object) -> None:
        """Drops every note of a companion (``companion_id``) or a conversation (``conversation_id``)."""
        for source in await self.store.drop_where(column, value):
            await self.engine.remove(source)
