"""Past conversations become searchable: what the user said is found by the search engine after the talk ends."""

from __future__ import annotations

from pathlib import Path

from app.conversations.indexing import conversation_source
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.wire.protocol import Message
from tests.app.conversation_search import lines_found


async def test_a_finished_conversation_is_found_by_search_and_forgotten_when_deleted(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        indexer, engine = runtime.parts.indexer, runtime.parts.search.engine  # type: ignore[union-attr]
        assert indexer is not None
        assert engine is not None
        first = runtime.parts.conversations.active_id
        assert first is not None
        # No model is configured here: every companion's vote fails, nobody speaks, the conversation ends by
        # itself, and the ended conversation is indexed.
        runtime.parts.conversations.send("来週の土曜日は鎌倉の紫陽花を見に行く予定です")
        [line] = await lines_found(engine, first, "鎌倉の紫陽花")
        assert "紫陽花" in line
        response = await engine.search("鎌倉の紫陽花", limit=3)
        assert response.hits[0].source == conversation_source(first)

        # A line stored without a word on the bus (as from another window): found once the user leaves the
        # conversation, which re-indexes it.
        await runtime.store.add_message(first, Message.create(from_="user", message="帰りに江ノ島で夕日を見たい"))
        await runtime.parts.conversations.new()
        await lines_found(engine, first, "江ノ島で夕日")

        await indexer.forget(first)
        assert all(h.source != conversation_source(first) for h in (await engine.search("鎌倉の紫陽花")).hits)
    finally:
        await runtime.stop()
