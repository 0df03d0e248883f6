"""Settings: file + environment layering, per-key fallback with a named problem, the file is never clobbered."""

from __future__ import annotations

import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.settings.model import DEFAULT_BRIDGE_PORT, Settings, load_settings, system_language
from companions.llm.detect import LOCAL_CANDIDATES


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
    assert loaded.settings.bridge.port == DEFAULT_BRIDGE_PORT
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
    loaded.write()
    text = loaded.paths.settings_file.read_text(encoding="utf-8")
    assert "verysecret" not in text
    monkeypatch.delenv("MADOI_LLM_API_KEY")
    again = load_settings().settings
    assert again.general.language == "en"
    assert again.search.folders == [madoi_home / "notes"]


def test_an_environment_override_is_never_saved_and_the_files_own_value_stays(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(madoi_home, '[camera]\nsource = "2"\n')
    monkeypatch.setenv("MADOI_CAMERA", "none")
    monkeypatch.setenv("MADOI_CONVERSATION_TURN_CAP", "8")
    loaded = load_settings()
    assert loaded.settings.camera.source == "none"
    loaded.settings.general.language = "en"  # what the user changed in the dialog
    loaded.write()
    data = tomllib.loads(loaded.paths.settings_file.read_text(encoding="utf-8"))
    assert data["camera"]["source"] == "2"  # the file's own value, not the override
    assert "turn_cap" not in data.get("conversation", {})  # never on file: still not
    assert data["general"]["language"] == "en"
    monkeypatch.delenv("MADOI_CAMERA")
    monkeypatch.delenv("MADOI_CONVERSATION_TURN_CAP")
    assert load_settings().settings.camera.source == "2"


@pytest.mark.parametrize(("environ", "expected"), [
    ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "en_US.UTF-8"}, "en"), ({"LANG": "ja_JP.UTF-8"}, "ja"),
    ({"LC_ALL": "ja_JP.UTF-8", "LANG": "C.UTF-8"}, "ja"), ({"LC_ALL": "C", "LANG": "ja_JP.UTF-8"}, "en"),
])
def test_the_language_follows_the_system_until_one_is_chosen(environ: dict[str, str], expected: str) -> None:
    assert system_language(environ) == expected


def test_under_lang_c_madoi_starts_in_english_and_a_chosen_language_stays(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: Madoi started in Japanese under LANG=C.UTF-8."""
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert load_settings().settings.general.language == "en"
    write(madoi_home, '[general]\nlanguage = "ja"\n')
    assert load_settings().settings.general.language == "ja"


KNOWN_MODEL_SERVER_PORTS = {
    11434: "Ollama", 8080: "llama.cpp llama-server", 1234: "LM Studio", 8000: "vLLM, llama-cpp-python",
    5000: "text-generation-webui (API)", 7860: "text-generation-webui", 5001: "KoboldCpp",
}


def test_the_bridge_does_not_take_a_model_servers_port_by_default() -> None:
    """Before: the bridge listened on 8080, llama.cpp's default, and Madoi's own detection knocked on it."""
    port = Settings().bridge.port
    assert port == DEFAULT_BRIDGE_PORT
    assert port not in KNOWN_MODEL_SERVER_PORTS
    assert port not in {urlsplit(c.base_url).port for c in LOCAL_CANDIDATES}

