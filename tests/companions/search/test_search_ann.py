"""The semantic channel's approximate index (companions/search/ann.py, vector_search.py) on real SQLite and faiss:
it takes over at its size, agrees with the exact scan, follows every write, and survives a crash mid-indexing."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from companions.search.ann import ann_path
from companions.search.engine import SearchCore
from companions.search.index import Upsert
from companions.search.semantic import Vectors

ANN_MIN = 400
DIM = 24


class HashEmbedder:
    """A unit vector per text, from its hash: deterministic, and queries are embedded like passages."""

    name = "hash-24"
    dim = DIM

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(DIM).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out

    def close(self) -> None:
        pass


def write(core: SearchCore, start: int, stop: int) -> None:
    docs = [Upsert(f"doc://{i}", f"note {i}", kind="text") for i in range(start, stop)]
    for at in range(0, len(docs), 100):
        core.index.upsert_many(docs[at : at + 100])


def open_core(path: Path) -> SearchCore:
    core = SearchCore(path, HashEmbedder(), ann_min=ANN_MIN)
    core.index.extractor = None  # the graph is not what is tested here, and extraction would take most of the time
    return core


def exact_top(core: SearchCore, query: Vectors, k: int = 10) -> list[int]:
    return [c for c, _ in core.index.vector_matrix().top(query, k)]


def stored_ids(core: SearchCore) -> set[int]:
    return {int(r[0]) for r in core.index.db.execute("SELECT id FROM chunks WHERE embedding IS NOT NULL")}


def ann_ids(core: SearchCore) -> set[int]:
    """The chunk ids the approximate index holds, read from its inverted lists."""
    import faiss

    ann = core.vectors._ann
    assert ann is not None
    invlists = faiss.extract_index_ivf(ann._index).invlists
    ids: set[int] = set()
    for lst in range(invlists.nlist):
        if size := invlists.list_size(lst):
            ids.update(faiss.rev_swig_ptr(invlists.get_ids(lst), size).tolist())
    return ids


def test_small_collections_stay_exact_and_large_ones_switch_at_the_threshold(tmp_path: Path) -> None:
    core = open_core(tmp_path / "search.sqlite3")
    write(core, 0, ANN_MIN - 100)
    assert not core.vectors.approximate
    assert not ann_path(core.index.path).exists()
    write(core, ANN_MIN - 100, ANN_MIN + 50)  # the write that crosses the threshold builds the index
    assert core.vectors.approximate
    assert ann_path(core.index.path).exists()
    assert ann_ids(core) == stored_ids(core)
    core.close()


def test_the_approximate_index_agrees_with_the_exact_scan(tmp_path: Path) -> None:
    core = open_core(tmp_path / "search.sqlite3")
    write(core, 0, 1200)
    assert core.vectors.approximate
    queries = HashEmbedder().embed([f"query {i}" for i in range(40)])
    recall = [len({c for c, _ in core.vectors.top(q, 10)} & set(exact_top(core, q))) / 10 for q in queries]
    assert np.mean(recall) >= 0.98
    top = core.vectors.top(queries[0], 5)
    exact = core.index.vector_matrix().top(queries[0], 5)
    assert [c for c, _ in top] == [c for c, _ in exact]
    assert [s for _, s in top] == pytest.approx([s for _, s in exact], abs=1e-5)  # exact cosines, rescored
    core.close()


def test_every_write_reaches_the_index_at_once(tmp_path: Path) -> None:
    core = open_core(tmp_path / "search.sqlite3")
    write(core, 0, ANN_MIN + 100)
    assert core.vectors.approximate
    new = HashEmbedder().embed(["note added later"])[0]
    core.index.upsert("doc://later", "note added later", kind="text")
    assert core.vectors.top(new, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    gone = HashEmbedder().embed(["note 7"])[0]
    gone_id = core.vectors.top(gone, 1)[0][0]
    core.index.remove("doc://7")
    assert gone_id not in {c for c, _ in core.vectors.top(gone, 10)}
    # The removed chunk's id is reused by SQLite for the next chunk: the index holds the new vector under it.
    core.index.upsert("doc://reuse", "note that takes a freed id", kind="text")
    reused = HashEmbedder().embed(["note that takes a freed id"])[0]
    assert core.vectors.top(reused, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    assert ann_ids(core) == stored_ids(core)
    core.close()


def test_a_crash_mid_indexing_is_caught_up_from_the_log(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite3"
    core = open_core(path)
    write(core, 0, ANN_MIN + 100)
    core.vectors.close()  # the index file as it was before the crash
    write(core, ANN_MIN + 100, ANN_MIN + 300)  # committed to SQLite, never saved to the index file
    core.index.remove("doc://3")
    core.index.db.close()  # the process dies: no save, no close
    core = open_core(path)
    assert core.vectors.approximate
    assert ann_ids(core) == stored_ids(core)
    late = HashEmbedder().embed([f"note {ANN_MIN + 250}"])[0]
    assert core.vectors.top(late, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    core.close()  # saves: the log entries it applied are forgotten
    core = open_core(path)
    assert core.index.db.execute("SELECT count(*) FROM vector_log").fetchone()[0] == 0
    core.close()


def test_an_unreadable_index_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite3"
    core = open_core(path)
    write(core, 0, ANN_MIN + 100)
    core.close()
    ann_path(path).write_bytes(b"not an index")
    core = open_core(path)
    assert core.vectors.approximate
    assert ann_ids(core) == stored_ids(core)
    core.close()


def test_a_collection_that_shrinks_goes_back_to_the_exact_scan(tmp_path: Path) -> None:
    core = open_core(tmp_path / "search.sqlite3")
    write(core, 0, ANN_MIN + 20)
    assert core.vectors.approximate
    for i in range(120):
        core.index.remove(f"doc://{i}")
    assert not core.vectors.approximate
    assert not ann_path(core.index.path).exists()
    query = HashEmbedder().embed(["note 300"])[0]
    assert [c for c, _ in core.vectors.top(query, 10)] == exact_top(core, query)
    core.close()


def test_deleting_everything_leaves_an_empty_exact_channel(tmp_path: Path) -> None:
    core = open_core(tmp_path / "search.sqlite3")
    write(core, 0, ANN_MIN + 20)
    assert core.vectors.approximate
    core.index.db.execute("DELETE FROM documents")  # every chunk at once (a rebuild, not a patch, of the index)
    core.index._changed()
    assert not core.vectors.approximate
    assert core.vectors.top(HashEmbedder().embed(["note 1"])[0], 10) == []
    write(core, 0, 10)
    assert len(core.vectors.top(HashEmbedder().embed(["note 1"])[0], 10)) == 10
    core.close()


def test_an_index_file_laid_out_by_another_version_is_built_again(tmp_path: Path) -> None:
    import faiss

    path = tmp_path / "search.sqlite3"
    core = open_core(path)
    write(core, 0, ANN_MIN + 100)
    stored = core.index.vector_matrix()
    core.close()
    # What an earlier version saved: other clusters, a valid file of the right size, no layout recorded.
    old = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(DIM), DIM, 2, faiss.ScalarQuantizer.QT_8bit,
                                        faiss.METRIC_INNER_PRODUCT)
    old.train(stored.vectors)
    old.add_with_ids(stored.vectors, stored.ids)
    faiss.write_index(old, str(ann_path(path)))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DELETE FROM meta WHERE key = 'ann_layout'")
    db.close()
    core = open_core(path)
    ann = core.vectors._ann
    assert ann is not None
    assert faiss.extract_index_ivf(ann._index).nlist > 2  # clustered again by this version's rule
    assert ann_ids(core) == stored_ids(core)
    query = HashEmbedder().embed(["note 42"])[0]
    assert core.vectors.top(query, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    core.close()
