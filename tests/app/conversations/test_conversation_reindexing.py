"""An edited or deleted message is searchable as it is now at once, not only after the user leaves the conversation
(issue 17): the real runtime, its real search index (SQLite FTS5 + embeddings) and its stored conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.conversations.indexing import conversation_source
from app.runtime.runtime import Runtime
from app.settings.model import load_settings


async def _found(runtime: Runtime, query: str) -> dict[str, str]:
    """Source -> text of the hits for ``query`` (with a handful of documents every one is a hit, however weak)."""
    engine = runtime.parts.search.engine  # type: ignore[union-attr]
    return {hit.source: hit.text for hit in (await engine.search(query, limit=10)).hits}


async def test_an_edit_or_a_deletion_is_searchable_right_away(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        conversations, indexer = runtime.parts.conversations, runtime.parts.indexer
        assert indexer is not None
        talk = conversations.active_id
        assert talk is not None
        # No model is configured: nobody answers, the conversation ends by itself and is indexed.
        said = conversations.send("来週の土曜日は鎌倉の紫陽花を見に行く予定です")
        async with asyncio.timeout(30):
            await indexer.wait_indexed(1)
        assert "鎌倉の紫陽花" in (await _found(runtime, "鎌倉の紫陽花"))[conversation_source(talk)]

        passes = indexer.indexed
        await conversations.revise(said.params.id, "来週の日曜日は箱根の温泉に行く予定です")
        async with asyncio.timeout(30):  # the user stays in the conversation: no other reason to index it
            await indexer.wait_indexed(passes + 1)
        found = (await _found(runtime, "箱根の温泉"))[conversation_source(talk)]
        assert "箱根の温泉" in found
        assert "紫陽花" not in found

        passes = indexer.indexed
        await conversations.revise(said.params.id, None)
        async with asyncio.timeout(30):
            await indexer.wait_indexed(passes + 1)
        assert conversation_source(talk) not in await _found(runtime, "箱根の温泉")  # nothing is left of it
        assert conversations.active_id == talk
    finally:
        await runtime.stop()
