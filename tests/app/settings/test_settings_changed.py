"""A change of settings is one typed event, published once by the program's settings store to the listeners of the
keys that changed (app/settings/store.py, app/settings/changes.py)."""

from __future__ import annotations

from pathlib import Path

from app.settings.changes import SettingsChanged
from app.settings.model import load_settings
from app.settings.store import SettingsListener


async def test_a_saved_change_reaches_the_listeners_of_its_keys_once(madoi_home: Path) -> None:
    store = load_settings()
    heard: dict[str, list[SettingsChanged]] = {"bridge": [], "port": [], "llm": [], "companions": []}

    def listener(name: str) -> SettingsListener:
        async def hear(change: SettingsChanged) -> None:
            heard[name].append(change)
        return hear

    store.subscribe(listener("bridge"), "bridge")
    store.subscribe(listener("port"), "bridge.port")
    store.subscribe(listener("llm"), "llm")
    stop = store.subscribe(listener("companions"), "companions")
    before = store.settings
    chosen = before.model_copy(update={"bridge": before.bridge.model_copy(update={"allowed_origins": ["http://a.example"]})})
    change = await store.apply(chosen)
    assert change.keys == {"bridge.allowed_origins"}
    assert store.settings is chosen
    assert [c.previous for c in heard["bridge"]] == [before]
    assert heard["port"] == []
    assert heard["llm"] == []
    await store.apply(chosen.model_copy())  # nothing changed: nobody hears of it
    assert len(heard["bridge"]) == 1
    stop()
    again = chosen.model_copy(update={"companions": {"akari": chosen.companion("akari").model_copy(
        update={"model": "llama"})}, "bridge": chosen.bridge.model_copy(update={"port": 9100})})
    change = await store.apply(again)
    assert change.keys == {"bridge.port", "companions.akari"}
    assert len(heard["bridge"]) == 2
    assert len(heard["port"]) == 1
    assert heard["companions"] == []


def test_what_differs_is_named_by_section_and_field(madoi_home: Path) -> None:
    settings = load_settings().settings
    other = settings.model_copy(update={"general": settings.general.model_copy(update={"language": "en"})})
    change = SettingsChanged.between(settings, other)
    assert change.keys == {"general.language"}
    assert change.touches("general")
    assert change.touches("general.language")
    assert not change.touches("general.theme")
