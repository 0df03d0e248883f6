"""An edited or deleted message is searchable as it is now at once, not only after the user leaves the conversation:
the real runtime, its real search index (SQLite FTS5 + embeddings) and its stored conversation."""

from __future__ import annotations

from pathlib import Path

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from tests.app.conversation_search import lines_found


async def test_an_edit_or_a_deletion_is_searchable_right_away(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        conversations, engine = runtime.parts.conversations, runtime.parts.search.engine  # type: ignore[union-attr]
        assert engine is not None
        talk = conversations.active_id
        assert talk is not None
        # No model is configured: nobody answers, the conversation ends by itself and is indexed.
        said = conversations.send("来週の土曜日は鎌倉の紫陽花を見に行く予定です")
        assert any("鎌倉の紫陽花" in line for line in await lines_found(engine, talk, "鎌倉の紫陽花"))

        # The user stays in the conversation: nothing but the edit has it indexed again.
        await conversations.revise(said.params.id, "来週の日曜日は箱根の温泉に行く予定です")
        found = await lines_found(engine, talk, "箱根の温泉", lambda lines: any("箱根の温泉" in s for s in lines))
        assert not any("紫陽花" in line for line in found)

        await conversations.revise(said.params.id, None)
        await lines_found(engine, talk, "箱根の温泉", lambda lines: not lines)  # nothing is left of it
        assert conversations.active_id == talk
    finally:
        await runtime.stop()
