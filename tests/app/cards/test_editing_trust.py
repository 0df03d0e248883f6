"""Saving a card in the companion editor approves the tools the user chose there, never what a held card asked for
unseen (app/cards/editing.py on the real runtime, real card files and settings)."""

from __future__ import annotations

from pathlib import Path

from app.cards.editing import RuntimeCompanionEditing
from app.runtime.runtime import Runtime
from app.settings.model import Settings, load_settings
from tests.security.user_cards import card_file


async def test_saving_in_the_editor_approves_the_tools_of_a_trusted_card_only(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    saved: list[Settings] = []
    editing = RuntimeCompanionEditing(runtime, saved.append)
    try:
        # The user changes Akari's colour: she is the user's card now, and keeps the camera the sample had.
        akari = runtime.parts.cast.companions["akari"].card
        await editing.save(akari.model_copy(update={"colour": "#123456"}))
        assert (madoi_home / "companions" / "akari.yaml").is_file()
        assert "akari" not in runtime.parts.cast.held
        assert runtime.parts.cast.companions["akari"].tools.get("vision") is not None

        # An imported card that grants itself the camera, its words edited: still held, still without it.
        card_file(madoi_home, "knowledge: [vision]\n")
        await runtime.reload_companions()
        kumo = runtime.parts.cast.held["kumo"].card
        await editing.save(kumo.model_copy(update={"colour": "#654321"}))
        assert "kumo" in runtime.parts.cast.held
        assert runtime.parts.cast.companions["kumo"].tools.get("vision") is None
        # Duplicated under a new id: a new card asking for more than the form offers is held too.
        copy = kumo.model_copy(update={"metadata": kumo.metadata.model_copy(update={"id": "kumo-2"})})
        await editing.save(copy)
        assert "kumo-2" in runtime.parts.cast.held
        # A new card whose only privilege is the form's "may search" box: the user chose it.
        searching = copy.model_copy(update={"metadata": kumo.metadata.model_copy(update={"id": "kumo-3"}),
                                            "knowledge": ["search"]})
        await editing.save(searching)
        assert "kumo-3" not in runtime.parts.cast.held
        assert runtime.parts.cast.companions["kumo-3"].tools.get("search") is not None
        assert [a.card for a in runtime.loaded.settings.trust.cards] == ["akari", "kumo-3"]
    finally:
        await runtime.stop()
