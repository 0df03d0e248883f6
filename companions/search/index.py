"""The search index: one SQLite file (WAL) with documents, chunks, an FTS5 keyword index, vectors and the graph.

``SearchIndex`` is synchronous and owns one connection; use it from one thread (the engine's worker thread).
Writes are incremental per document: a document whose content hash is unchanged is skipped, a changed one has
its chunks replaced (vectors of unchanged chunk texts are reused), a deleted one loses its chunks, mentions and
relations through ``ON DELETE CASCADE``.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from companions.common.private_files import private_sqlite
from companions.search.ann import LOG_SCHEMA
from companions.search.graph import Extraction, entity_key, extract_heuristic
from companions.search.semantic import Embedder, VectorMatrix, from_blobs, to_blob
from companions.search.tokenize import TokenMode, index_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL UNIQUE, title TEXT NOT NULL, kind TEXT NOT NULL,
    content_hash TEXT NOT NULL, indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL, text TEXT NOT NULL, embedding BLOB);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(terms, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS entities (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, community INTEGER);
CREATE TABLE IF NOT EXISTS mentions (
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(id), PRIMARY KEY (chunk_id, entity_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions(entity_id);
CREATE TABLE IF NOT EXISTS relations (
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    src INTEGER NOT NULL REFERENCES entities(id), dst INTEGER NOT NULL REFERENCES entities(id),
    label TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS relations_chunk ON relations(chunk_id);
CREATE TABLE IF NOT EXISTS communities (
    id INTEGER PRIMARY KEY, size INTEGER NOT NULL, entities TEXT NOT NULL, summary TEXT NOT NULL,
    chunk_ids TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunk_lines (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL, speaker TEXT NOT NULL, at REAL NOT NULL);
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;
"""
CHUNK_CHARS = 800
UPSERT_BATCH = 16  # documents embedded together by index_paths
TERM_COUNT_CACHE = 100_000  # terms whose chunk counts are remembered between writes
DocKind = Literal["file", "conversation", "text"]
Change = Literal["added", "updated", "unchanged", "removed", "missing"]
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".text"})


@dataclass(frozen=True)
class IndexedLine:
    """One message of a conversation, indexed as a chunk of its own: long-term recall (companions/memory/recall.py)
    finds lines, each with who said it and when, not pages of a conversation."""

    message_id: str
    speaker: str  # the speaker's id
    at: float  # when it was said (seconds since the epoch)
    text: str  # what is indexed and embedded ("Name: words")


@dataclass(frozen=True)
class Upsert:
    """One document to add or replace (see :meth:`SearchIndex.upsert`). With ``lines``, each line is one chunk
    (in that order) instead of ``text`` split into paragraphs; ``text`` still decides whether it changed."""

    source: str
    text: str
    title: str | None = None
    kind: DocKind = "file"
    extractions: Sequence[Extraction] | None = None
    lines: Sequence[IndexedLine] | None = None


@dataclass
class _Pending:
    doc: Upsert
    digest: str
    old_id: int | None
    chunks: list[str]
    extractions: list[Extraction]
    vectors: list[bytes | None]


@dataclass(frozen=True)
class ChunkRecord:
    id: int
    source: str
    title: str
    kind: str
    text: str


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_chunks(text: str, max_chars: int = CHUNK_CHARS) -> list[str]:
    """Paragraphs packed up to ``max_chars``; an over-long paragraph is cut at sentence ends (or hard)."""
    from companions.search.graph import sentences

    pieces: list[str] = []
    for para in (p.strip() for p in text.replace("\r\n", "\n").split("\n\n")):
        if not para:
            continue
        if len(para) <= max_chars:
            pieces.append(para)
            continue
        for sentence in sentences(para):
            rest = sentence
            while len(rest) > max_chars:
                pieces.append(rest[:max_chars])
                rest = rest[max_chars:]
            pieces.append(rest)
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) + 2 <= max_chars:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return chunks


class SearchIndex:
    """Documents, chunks and every channel's data in one SQLite database file."""

    def __init__(self, path: Path | str, embedder: Embedder | None = None, *, token_mode: TokenMode = "mixed",
                 extractor: Callable[[str], Extraction] | None = extract_heuristic) -> None:
        self.path = Path(path)
        private_sqlite(self.path)  # the index holds the user's conversations and files: 0600, its -wal and -shm too
        self.embedder = embedder
        self.token_mode = token_mode
        self.extractor = extractor
        self.db = sqlite3.connect(str(self.path), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA + LOG_SCHEMA)
        self.generation = 0  # bumped on every write; caches (vectors, graph) compare against it
        self.write_listeners: list[Callable[[], None]] = []  # called after every write (the vector graph's catch-up)
        self._vocabulary_generation = -1
        self._chunk_count = 0
        self._term_counts: dict[str, int] = {}
        self._check_meta()

    def close(self) -> None:
        self.db.close()

    # -- meta -------------------------------------------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def _check_meta(self) -> None:
        """Re-tokenizes or re-embeds everything when the token mode or the embedding model changed."""
        if self._meta("token_mode") not in (None, self.token_mode):
            with self._tx():
                self.db.execute("DELETE FROM chunks_fts")
                rows = self.db.execute("SELECT id, text FROM chunks").fetchall()
                self.db.executemany("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)",
                                    [(cid, index_text(t, self.token_mode)) for cid, t in rows])
        self._set_meta("token_mode", self.token_mode)
        if self.embedder is not None:
            if self._meta("embedder") not in (None, self.embedder.name):
                self.db.execute("UPDATE chunks SET embedding = NULL")
            self._set_meta("embedder", self.embedder.name)
            self.embed_missing()

    def _changed(self) -> None:
        self.generation += 1
        for listener in self.write_listeners:
            listener()

    def _tx(self) -> _Tx:
        self.db.execute("BEGIN")
        return _Tx(self.db)

    # -- writing ----------------------------------------------------------------------------------------------
    def upsert(self, source: str, text: str, *, title: str | None = None, kind: DocKind = "file",
               extractions: Sequence[Extraction] | None = None) -> Change:
        """Adds or replaces one document. ``extractions`` (one per chunk of ``split_chunks(text)``) override the
        configured extractor, e.g. with what an LLM found."""
        return self.upsert_many([Upsert(source, text, title, kind, extractions)])[0]

    def upsert_many(self, docs: Sequence[Upsert]) -> list[Change]:
        """Adds or replaces several documents, embedding the chunks of all of them in one call: the model embeds
        a batch several times faster than the same texts one by one (measured with multilingual-e5-small:
        4.8 against 1.1 docs/s on JSQuAD paragraphs). Each document is still written in its own transaction.
        Raises ValueError when a source appears twice."""
        if len({d.source for d in docs}) != len(docs):
            raise ValueError("upsert_many: each source at most once")
        pending: list[_Pending] = []
        changes: list[Change] = []
        for doc in docs:
            digest = content_hash(doc.text)
            row = self.db.execute("SELECT id, content_hash FROM documents WHERE source = ?", (doc.source,)).fetchone()
            if row is not None and row[1] == digest:
                changes.append("unchanged")
                continue
            chunks = split_chunks(doc.text) if doc.lines is None else [line.text for line in doc.lines]
            extractions = doc.extractions
            if extractions is None:
                extractions = [self.extractor(c) if self.extractor else Extraction() for c in chunks]
            old_vectors: dict[str, bytes] = {}
            if row is not None:
                old_vectors = {t: e for t, e in self.db.execute(
                    "SELECT text, embedding FROM chunks WHERE doc_id = ? AND embedding IS NOT NULL", (row[0],))}
            vectors: list[bytes | None] = [old_vectors.get(c) for c in chunks]
            pending.append(_Pending(doc, digest, None if row is None else int(row[0]), chunks, list(extractions),
                                    vectors))
            changes.append("added" if row is None else "updated")
        if self.embedder is not None:
            todo = [(p, i) for p in pending for i, v in enumerate(p.vectors) if v is None]
            if todo:
                embedded = self.embedder.embed([p.chunks[i] for p, i in todo])
                for (p, i), vec in zip(todo, embedded, strict=True):
                    p.vectors[i] = to_blob(vec)
        for p in pending:
            self._write(p)
        return changes

    def _write(self, p: _Pending) -> None:
        doc = p.doc
        with self._tx():
            if p.old_id is not None:
                self.db.execute("DELETE FROM documents WHERE id = ?", (p.old_id,))
            doc_id = self.db.execute(
                "INSERT INTO documents(source, title, kind, content_hash, indexed_at) VALUES (?, ?, ?, ?, ?)",
                (doc.source, doc.title or Path(doc.source).name or doc.source, doc.kind, p.digest,
                 time.time())).lastrowid
            for ord_, (chunk, vec, ext) in enumerate(zip(p.chunks, p.vectors, p.extractions, strict=True)):
                cid = self.db.execute("INSERT INTO chunks(doc_id, ord, text, embedding) VALUES (?, ?, ?, ?)",
                                      (doc_id, ord_, chunk, vec)).lastrowid
                self.db.execute("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)",
                                (cid, index_text(chunk, self.token_mode)))
                self._store_extraction(int(cid or 0), ext)
                if doc.lines is not None:
                    line = doc.lines[ord_]
                    self.db.execute("INSERT INTO chunk_lines(chunk_id, message_id, speaker, at) VALUES (?, ?, ?, ?)",
                                    (cid, line.message_id, line.speaker, line.at))
            self._set_meta("communities_dirty", "1")
        self._changed()

    def _entity_id(self, name: str) -> int:
        key = entity_key(name)
        row = self.db.execute("SELECT id FROM entities WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        return int(self.db.execute("INSERT INTO entities(key, name) VALUES (?, ?)", (key, name)).lastrowid or 0)

    def _store_extraction(self, chunk_id: int, ext: Extraction) -> None:
        ids = {entity_key(name): self._entity_id(name) for name in ext.entities}
        self.db.executemany("INSERT OR IGNORE INTO mentions(chunk_id, entity_id) VALUES (?, ?)",
                            [(chunk_id, eid) for eid in ids.values()])
        rels = []
        for src, dst, label in ext.relations:
            a = ids.get(entity_key(src)) or self._entity_id(src)
            b = ids.get(entity_key(dst)) or self._entity_id(dst)
            if a != b:
                rels.append((chunk_id, a, b, label))
        self.db.executemany("INSERT INTO relations(chunk_id, src, dst, label) VALUES (?, ?, ?, ?)", rels)

    def remove(self, source: str) -> Change:
        with self._tx():
            cur = self.db.execute("DELETE FROM documents WHERE source = ?", (source,))
            if cur.rowcount:
                self._set_meta("communities_dirty", "1")
        self._changed()
        return "removed" if cur.rowcount else "missing"

    def pending_files(self, paths: Sequence[Path], *, prune: bool = True,
                      ) -> tuple[list[tuple[Path, str]], dict[str, Change]]:
        """Text files (``.md``, ``.txt``, ...) under ``paths`` that are new or changed, with their text, and the
        changes already settled: unchanged files, and (with ``prune``) files indexed under a given folder that no
        longer exist, which are removed here."""
        todo: list[tuple[Path, str]] = []
        changes: dict[str, Change] = {}
        for given in paths:
            root = given.resolve()
            files = [root] if root.is_file() else sorted(
                p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
            for file in files:
                try:
                    text = file.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                row = self.db.execute("SELECT content_hash FROM documents WHERE source = ?", (str(file),)).fetchone()
                if row is not None and row[0] == content_hash(text):
                    changes[str(file)] = "unchanged"
                else:
                    todo.append((file, text))
            if prune and root.is_dir():
                prefix = os.path.join(str(root), "")  # the folder with a trailing separator
                for (source,) in self.db.execute(
                        "SELECT source FROM documents WHERE kind = 'file' AND substr(source, 1, ?) = ?",
                        (len(prefix), prefix)).fetchall():
                    if not Path(source).exists():
                        changes[source] = self.remove(source)
        return todo, changes

    def forget_folder(self, folder: Path) -> dict[str, Change]:
        """Removes every document of a file under ``folder`` (the user no longer wants it searched)."""
        prefix = os.path.join(str(folder.resolve()), "")  # the folder with a trailing separator
        sources = self.db.execute("SELECT source FROM documents WHERE kind = 'file' AND substr(source, 1, ?) = ?",
                                  (len(prefix), prefix)).fetchall()
        return {source: self.remove(source) for (source,) in sources}

    def index_paths(self, paths: Sequence[Path], *, prune: bool = True) -> dict[str, Change]:
        """Indexes the new and changed text files under ``paths`` (see :meth:`pending_files`)."""
        todo, changes = self.pending_files(paths, prune=prune)
        for start in range(0, len(todo), UPSERT_BATCH):
            part = todo[start : start + UPSERT_BATCH]
            done = self.upsert_many([Upsert(str(file), text, file.stem) for file, text in part])
            changes.update((str(file), change) for (file, _), change in zip(part, done, strict=True))
        return changes

    def embed_missing(self, batch: int = 32) -> int:
        """Embeds chunks stored without a vector (e.g. after the model changed). Returns how many."""
        if self.embedder is None:
            return 0
        rows = self.db.execute("SELECT id, text FROM chunks WHERE embedding IS NULL").fetchall()
        for i in range(0, len(rows), batch):
            part = rows[i : i + batch]
            vecs = self.embedder.embed([t for _, t in part])
            with self._tx():
                self.db.executemany("UPDATE chunks SET embedding = ? WHERE id = ?",
                                    [(to_blob(v), cid) for (cid, _), v in zip(part, vecs, strict=True)])
        if rows:
            self._changed()
        return len(rows)

    # -- reading ----------------------------------------------------------------------------------------------
    def term_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each of ``terms`` (FTS5's vocabulary), and how many chunks there are.

        FTS5 counts a term's chunks by walking its posting list (~0.05 ms for a common bigram), so counts are kept
        until the next write; queries share most of their bigrams.
        """
        if self._vocabulary_generation != self.generation or len(self._term_counts) > TERM_COUNT_CACHE:
            self.db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING fts5vocab(main, chunks_fts, row)")
            self._chunk_count = int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
            self._term_counts.clear()
            self._vocabulary_generation = self.generation
        unknown = [t for t in dict.fromkeys(terms) if t not in self._term_counts]
        for start in range(0, len(unknown), 500):  # within SQLite's limit on bound parameters
            part = unknown[start : start + 500]
            self._term_counts.update(dict.fromkeys(part, 0))
            self._term_counts.update(self.db.execute(
                f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({','.join('?' * len(part))})", part))
        counts = {t: n for t in terms if (n := self._term_counts[t])}
        return counts, self._chunk_count

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT c.id, d.source, d.title, d.kind, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id "
            f"WHERE c.id IN ({marks})", list(ids)).fetchall()
        return {r[0]: ChunkRecord(*r) for r in rows}

    def lines(self, ids: Sequence[int]) -> dict[int, IndexedLine]:
        """The conversation lines among the chunks ``ids`` (chunk id -> line; its text is the chunk's)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT l.chunk_id, l.message_id, l.speaker, l.at, c.text FROM chunk_lines l JOIN chunks c"
            f" ON c.id = l.chunk_id WHERE l.chunk_id IN ({marks})", list(ids)).fetchall()
        return {int(r[0]): IndexedLine(str(r[1]), str(r[2]), float(r[3]), str(r[4])) for r in rows}

    def stats(self) -> dict[str, int]:
        def count(table: str) -> int:
            return int(self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

        return {"documents": count("documents"), "chunks": count("chunks"), "entities": count("entities"),
                "relations": count("relations"), "communities": count("communities")}

    def all_vectors(self) -> tuple[list[int], list[bytes]]:
        rows = self.db.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id").fetchall()
        return [r[0] for r in rows], [r[1] for r in rows]

    def vector_matrix(self) -> VectorMatrix:
        """Every stored vector in one matrix (for the semantic channel's cache)."""
        ids, blobs = self.all_vectors()
        dim = self.embedder.dim if self.embedder is not None else 0
        return VectorMatrix(np.array(ids, dtype=np.int64), from_blobs(blobs, dim))


class _Tx:
    """``with index._tx():`` commits on success and rolls back on error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
