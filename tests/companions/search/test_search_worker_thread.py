"""The search index's thread: jobs in order, failures handed back, and closing never waits on a long job."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from companions.search.engine import SearchEngine
from companions.search.semantic import Vectors
from companions.search.worker_thread import DaemonWorkerExecutor
from tests.companions.search_doubles import HashingEmbedder


def test_jobs_run_in_order_on_one_daemon_thread_and_failures_reach_the_caller() -> None:
    executor = DaemonWorkerExecutor("test-worker")
    seen: list[tuple[int, str]] = []
    futures = [executor.submit(lambda i=i: seen.append((i, threading.current_thread().name))) for i in range(5)]
    failing = executor.submit(lambda: 1 / 0)
    for future in futures:
        future.result(timeout=5)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=5)
    assert [i for i, _ in seen] == [0, 1, 2, 3, 4]
    assert {name for _, name in seen} == {"test-worker"}
    executor.shutdown(wait=True)
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(lambda: None)


class SlowEmbedder(HashingEmbedder):
    """Embeds passages only once ``release`` is set: a large file on a slow machine."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if not query and any("slow" in t for t in texts):
            self.started.set()
            self.release.wait(10)
        return super().embed(texts, query=query)


async def test_closing_does_not_wait_for_a_file_half_way_through_its_embeddings(tmp_path: Path) -> None:
    embedder = SlowEmbedder()
    engine = SearchEngine(tmp_path / "search.sqlite3", embedder=embedder)
    await engine.open()
    indexing = asyncio.create_task(engine.index_text("doc:slow", "a slow document " * 50))
    await asyncio.get_running_loop().run_in_executor(None, embedder.started.wait, 5)
    began = time.perf_counter()
    await engine.aclose(wait_s=0.2)
    assert time.perf_counter() - began < 1.0  # the app closes on time; the index closes after the job
    embedder.release.set()
    await asyncio.wait([indexing], timeout=5)
    assert indexing.result() == "added"  # the job in progress finished, then the index closed
    reopened = SearchEngine(tmp_path / "search.sqlite3", embedder=HashingEmbedder())
    await reopened.open()
    assert (await reopened.stats())["documents"] == 1
    await reopened.aclose()
