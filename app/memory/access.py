"""The Memory view's port (``ui.window.panel_ports.MemoryAccess``) on the running app: what each companion remembers,
the user's switch, and forgetting.

Forgetting is immediate and complete for that companion: its memory table rows go (recall reads who heard what
there, so a forgotten line is never recalled again, even before anything else changes), its context drops the line
(the next prompt, and so the next warm-up of the server's prompt cache, no longer holds it), its notes made from
the line go with their index entries (app/memory/notes.py), and the recall kept for recent messages is dropped.
The conversation itself stays in the user's history (and the Search panel), since only the companion forgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.memory.notes import NoteWriter
from app.runtime.runtime import Runtime
from app.settings.sections import CompanionSettings
from companions.companion.companion import Companion
from companions.memory.context import HeardLine
from companions.memory.notes import Note

NOTE_ID_PREFIX = "note:"  # a note among the ids the Memory view asks to forget: note:<note id>


@dataclass(frozen=True)
class RuntimeMemory:
    """``ui.window.panel_ports.MemoryAccess`` for ``runtime`` (before it started: nobody remembers anything)."""

    runtime: Runtime

    def _companion(self, companion_id: str) -> Companion | None:
        if not self.runtime.started:
            return None
        return self.runtime.parts.cast.companions.get(companion_id)

    def enabled(self, companion_id: str) -> bool:
        return self.runtime.settings.companion(companion_id).memory

    def set_enabled(self, companion_id: str, on: bool) -> None:
        """Turns long-term recall on or off for one companion, saved in the settings file at once."""
        settings = self.runtime.settings
        current = settings.companions.get(companion_id) or CompanionSettings()
        settings.companions = {**settings.companions, companion_id: current.model_copy(update={"memory": on})}
        self.runtime.loaded.write(settings)
        companion = self._companion(companion_id)
        if companion is not None and companion.recall is not None:
            companion.recall.forget_cached()

    async def remembered(self, companion_id: str, containing: str = "", limit: int = 200) -> list[HeardLine]:
        companion = self._companion(companion_id)
        if companion is None:
            return []
        return await self.runtime.parts.memory.remembered(companion_id, containing=containing, limit=limit)

    async def notes(self, companion_id: str) -> list[tuple[int, Note]]:
        notes = self._notes()
        return [] if notes is None else await notes.store.of_companion(companion_id)

    def _notes(self) -> NoteWriter | None:
        indexer = self.runtime.parts.indexer if self.runtime.started else None
        return indexer.notes if indexer is not None else None

    async def count(self, companion_id: str) -> int:
        return await self.runtime.parts.memory.count(companion_id) if self.runtime.started else 0

    async def forget(self, companion_id: str, message_ids: Sequence[str]) -> None:
        companion = self._companion(companion_id)
        if companion is None:
            return
        notes = self._notes()
        lines = [m for m in message_ids if not m.startswith(NOTE_ID_PREFIX)]
        for message_id in message_ids:
            if message_id.startswith(NOTE_ID_PREFIX) and notes is not None:
                await notes.forget_note(int(message_id.removeprefix(NOTE_ID_PREFIX)))
        for message_id in lines:
            await companion.memory.revise(message_id, None)  # the context and the store, for this companion only
        await self._forgotten(companion_id, lines)

    async def forget_all(self, companion_id: str) -> None:
        companion = self._companion(companion_id)
        if companion is None:
            return
        await companion.memory.forget_everything()
        await self._forgotten(companion_id, None)

    async def _forgotten(self, companion_id: str, message_ids: Sequence[str] | None) -> None:
        companion = self._companion(companion_id)
        if companion is not None and companion.recall is not None:
            companion.recall.forget_cached()
        notes = self._notes()
        if notes is not None:  # a note never outlives the lines it came from
            if message_ids is None:
                await notes.forget_all("companion_id", companion_id)
            for message_id in message_ids or ():
                await notes.forget(message_id, companion_id)
