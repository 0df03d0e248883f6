"""The runtime's search component: background indexing of the samples and the user's folders, then search."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.search.service import SearchIndexUpdated, build_search_service
from app.settings.model import load_settings
from companions.wire.bus import InProcessBus
from tests.companions.search_doubles import HashingEmbedder


async def test_service_indexes_samples_and_folders_in_the_background(madoi_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "garden.txt").write_text("The greenhouse tomatoes ripen in late July.", encoding="utf-8")
    loaded = load_settings()
    loaded.settings.search.folders = [folder, tmp_path / "missing"]
    bus = InProcessBus()
    updates: asyncio.Queue[SearchIndexUpdated] = asyncio.Queue()

    async def on_event(item: object) -> None:
        if isinstance(item, SearchIndexUpdated):
            await updates.put(item)

    bus.subscribe(["events"], on_event, name="test")
    service = build_search_service(loaded.settings, loaded.paths.ensure(), bus, embedder=HashingEmbedder())
    await service.start()
    try:
        update = await asyncio.wait_for(updates.get(), 60)
        assert update.changed == 5  # four samples and the user's file
        assert update.documents == 5
        assert any("missing" in p for p in update.problems)
        response = await service.engine.search("When do the tomatoes ripen?", limit=1)
        assert response.hits[0].source.endswith("garden.txt")
        result = await service.research_agent(None).run("千利休は誰に仕えた？")
        assert result.citations[0].source.endswith("tea-ceremony.ja.md")
    finally:
        await service.stop()
        await bus.aclose()
    assert (madoi_home / "search.sqlite3").exists()
