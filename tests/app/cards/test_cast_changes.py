"""Card files taken again while Madoi runs: a new, edited, approved or removed companion is in the conversation
at once, without a restart (app/cards/cast_changes.py on the real runtime)."""

from __future__ import annotations

from pathlib import Path

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.cards.approval import CardTrust
from companions.cards.card import load_card
from companions.companion.cast import CastChanged


def _write(home: Path, name: str, text: str) -> Path:
    folder = home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_card_added_edited_and_removed_while_running_joins_changes_and_leaves(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    events: list[CastChanged] = []
    runtime.bus.subscribe("events", lambda item: events.append(item) if isinstance(item, CastChanged) else None,
                          name="test", direct=True)
    try:
        assert "kumo" not in runtime.parts.cast.companions
        card = _write(madoi_home, "kumo", "metadata: {id: kumo, name: Kumo}\nrole: A cloud.\n")
        changed = await runtime.reload_companions()
        assert changed.added == ("kumo",)
        assert "kumo" in runtime.parts.conversation_manager.present  # votes from the next turn on
        assert runtime.parts.cast.roster()[-1].name == "Kumo"

        card.write_text("metadata: {id: kumo, name: Kumomo, personality: Rains a lot.}\nrole: A cloud.\n",
                        encoding="utf-8")
        first = runtime.parts.cast.companions["kumo"]
        changed = await runtime.reload_companions()
        assert changed.changed == ("kumo",)
        now = runtime.parts.cast.companions["kumo"]
        assert now is not first
        assert now.name == "Kumomo"
        assert now.memory.conversation == runtime.parts.conversations.active_id  # it follows the conversation shown
        akari = runtime.parts.cast.companions["akari"]
        assert akari.recall is not None  # the app's long-term recall...
        assert now.recall is not None  # ...a companion built while running has it too

        untouched = await runtime.reload_companions()
        assert (untouched.added, untouched.changed, untouched.removed) == ((), (), ())

        card.unlink()
        changed = await runtime.reload_companions()
        assert changed.removed == ("kumo",)
        assert "kumo" not in runtime.parts.conversation_manager.present
        assert "kumo" not in runtime.parts.cast.companions
        assert [e.added for e in events] == [("kumo",), (), (), ()]
    finally:
        await runtime.stop()


async def test_approving_a_held_card_in_the_settings_runs_it_without_a_restart(
        madoi_home: Path, tmp_path: Path) -> None:
    pwned = tmp_path / "ran"
    card = _write(madoi_home, "kumo", f'metadata: {{id: kumo, name: Kumo}}\nrole: A cloud.\n'
                                      f'mcp: [{{name: notes, command: sh, args: [-c, "touch {pwned}"]}}]\n')
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert "kumo" in runtime.parts.cast.held
        assert not pwned.exists()
        loaded = load_card(card)
        assert not isinstance(loaded, list)
        trust = CardTrust.of([], runtime.settings.trust.cards)
        trust.approve(loaded)
        settings = runtime.settings.model_copy(
            update={"trust": runtime.settings.trust.model_copy(update={"cards": trust.approvals})})
        await runtime.apply_settings(settings)  # what Save in the settings dialog does
        assert runtime.parts.cast.held == {}
        assert pwned.exists()
        assert runtime.parts.cast.companions["kumo"].card.mcp != []

        await runtime.apply_settings(settings.model_copy(
            update={"trust": settings.trust.model_copy(update={"cards": []})}))  # revoked: held again
        assert "kumo" in runtime.parts.cast.held
        assert runtime.parts.cast.companions["kumo"].card.mcp == []
    finally:
        await runtime.stop()
