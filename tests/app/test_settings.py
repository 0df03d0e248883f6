"""Settings: file + environment layering, per-key fallback with a named problem, the file is never clobbered."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import load_settings, save_settings


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(madoi_home: Path) -> None:
    loaded = load_settings()
    assert loaded.problems == []
    assert loaded.paths.data_dir == madoi_home
    assert loaded.settings.bridge.host == "127.0.0.1"
    assert loaded.settings.general.language == "ja"


def test_file_values_and_environment_overrides(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(madoi_home, '[llm]\nbase_url = "http://localhost:11434/v1"\nmodel = "qwen"\n[camera]\nsource = "2"\n')
    monkeypatch.setenv("MADOI_LLM_MODEL", "llama")
    monkeypatch.setenv("MADOI_LLM_API_KEY", "sk-secret")
    monkeypatch.setenv("MADOI_CAMERA", "none")
    monkeypatch.setenv("MADOI_BRIDGE_PORT", "9001")
    s = load_settings().settings
    assert s.llm.base_url == "http://localhost:11434/v1"
    assert s.llm.model == "llama"
    assert s.llm.api_key is not None
    assert s.llm.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(s)
    assert not s.camera.enabled
    assert s.bridge.port == 9001


def test_an_invalid_key_is_reported_by_name_and_falls_back(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MADOI_BRIDGE_PORT")
    text = '[bridge]\nport = "eighty"\nhost = "0.0.0.0"\n[conversation]\nturn_cap = -3\n[nonsense]\na = 1\n'
    path = write(madoi_home, text)
    loaded = load_settings()
    problems = "\n".join(loaded.problems)
    assert "bridge.port" in problems
    assert "conversation.turn_cap" in problems
    assert "[nonsense]" in problems
    assert loaded.settings.bridge.port == 8080  # default
    assert loaded.settings.bridge.host == "0.0.0.0"  # the valid key next to it is kept
    assert path.read_text(encoding="utf-8") == text  # never rewritten


def test_an_unreadable_file_still_starts_on_defaults(madoi_home: Path) -> None:
    write(madoi_home, "this is = = not toml [")
    loaded = load_settings()
    assert len(loaded.problems) == 1
    assert "unreadable" in loaded.problems[0]
    assert loaded.settings.conversation.turn_cap == 12


def test_invalid_environment_value_is_reported(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_LLM_BASE_URL", "localhost:1234")
    loaded = load_settings()
    assert any("llm.base_url" in p for p in loaded.problems)
    assert loaded.settings.llm.base_url is None


def test_save_round_trips_without_secrets(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_LLM_API_KEY", "sk-verysecret")
    loaded = load_settings()
    loaded.settings.general.language = "en"
    loaded.settings.search.folders = [madoi_home / "notes"]
    save_settings(loaded.settings, loaded.paths)
    text = loaded.paths.settings_file.read_text(encoding="utf-8")
    assert "verysecret" not in text
    monkeypatch.delenv("MADOI_LLM_API_KEY")
    again = load_settings().settings
    assert again.general.language == "en"
    assert again.search.folders == [madoi_home / "notes"]
