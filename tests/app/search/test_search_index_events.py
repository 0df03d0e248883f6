"""The search service publishes SearchIndexProgress during an indexing pass, then SearchIndexUpdated; reindex()
runs another pass (one at a time)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.search.service import SearchIndexProgress, SearchIndexUpdated, build_search_service
from app.settings.model import load_settings
from companions.wire.bus import InProcessBus
from tests.companions.search_doubles import HashingEmbedder


async def test_progress_events_then_the_update_and_reindex_picks_up_new_files(madoi_home: Path,
                                                                              tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    loaded = load_settings()
    loaded.settings.search.folders = [folder]
    bus = InProcessBus()
    events: asyncio.Queue[SearchIndexProgress | SearchIndexUpdated] = asyncio.Queue()

    def on_event(item: object) -> None:
        if isinstance(item, SearchIndexProgress | SearchIndexUpdated):
            events.put_nowait(item)

    async def one_pass() -> list[SearchIndexProgress | SearchIndexUpdated]:
        seen = [await asyncio.wait_for(events.get(), 60)]
        while not isinstance(seen[-1], SearchIndexUpdated):
            seen.append(await asyncio.wait_for(events.get(), 60))
        return seen

    bus.subscribe(["events"], on_event, name="test")
    service = build_search_service(loaded.settings, loaded.paths.ensure(), bus, embedder=HashingEmbedder())
    await service.start()
    try:
        first = await one_pass()
        assert [(e.done, e.total) for e in first[:-1] if isinstance(e, SearchIndexProgress)] == [
            (0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]  # the four bundled samples
        assert first[-1] == SearchIndexUpdated(changed=4, documents=4)
        assert service.indexed == first[-1]
        assert service.progress is None

        (folder / "garden.txt").write_text("The greenhouse tomatoes ripen in late July.", encoding="utf-8")
        task = service.reindex()
        assert service.reindex() is task  # a pass is running: no second one
        second = await one_pass()
        assert [(e.done, e.total, Path(e.current).name) for e in second[:-1] if isinstance(e, SearchIndexProgress)
                ] == [(0, 1, "garden.txt"), (1, 1, "")]
        assert second[-1] == SearchIndexUpdated(changed=1, documents=5)
        await task
        assert service.reindex() is not task  # the pass ended: a new one starts
        assert (await one_pass())[-1] == SearchIndexUpdated(changed=0, documents=5)
    finally:
        await service.stop()
        await bus.aclose()
