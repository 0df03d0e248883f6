"""``SearchEngine.index_paths(progress=...)``: the counts of new or changed files, reported on the event loop."""

from __future__ import annotations

import threading
from pathlib import Path

from companions.search.engine import SearchEngine
from tests.companions.search_doubles import HashingEmbedder


async def test_progress_counts_the_new_and_changed_files_on_the_loop_thread(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md", "c.txt"):
        (docs / name).write_text(f"{name} is about apples and pears.", encoding="utf-8")
    engine = SearchEngine(tmp_path / "search.sqlite3", embedder=HashingEmbedder())
    calls: list[tuple[int, int, str, str]] = []

    def progress(done: int, total: int, current: str) -> None:
        calls.append((done, total, Path(current).name if current else "", threading.current_thread().name))

    try:
        await engine.index_paths([docs], progress=progress)
        loop_thread = threading.current_thread().name
        assert calls == [(0, 3, "a.md", loop_thread), (1, 3, "b.md", loop_thread), (2, 3, "c.txt", loop_thread),
                         (3, 3, "", loop_thread)]

        calls.clear()
        (docs / "b.md").write_text("b.md now talks about plums.", encoding="utf-8")
        changes = await engine.index_paths([docs], progress=progress)
        assert changes[str(docs.resolve() / "b.md")] == "updated"
        assert [c[:3] for c in calls] == [(0, 1, "b.md"), (1, 1, "")]  # unchanged files are not counted

        calls.clear()
        await engine.index_paths([docs], progress=progress)
        assert [c[:3] for c in calls] == [(0, 0, "")]  # nothing to do: the end is still reported
        assert await engine.index_paths([docs]) == {str(docs.resolve() / n): "unchanged"
                                                      for n in ("a.md", "b.md", "c.txt")}  # progress is optional
    finally:
        await engine.aclose()
