"""Every ``MADOI_*`` name the README, docs, scripts, bench and start use sets its setting through pydantic-settings'
environment source (app/settings/environment.py), over the file, and a name that is no setting stays out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.settings.model import load_settings

# name, value, the setting it sets ("section.field") and the value read
DOCUMENTED = [
    ("MADOI_CAMERA", "none", "camera.source", "none"),
    ("MADOI_LANGUAGE", "en", "general.language", "en"),
    ("MADOI_GENERAL_LANGUAGE", "en", "general.language", "en"),
    ("MADOI_GENERAL_THEME", "dark", "general.theme", "dark"),
    ("MADOI_GENERAL_USER_NAME", "Mika", "general.user_name", "Mika"),
    ("MADOI_LLM_BASE_URL", "http://127.0.0.1:11434/v1", "llm.base_url", "http://127.0.0.1:11434/v1"),
    ("MADOI_LLM_MODEL", "qwen2.5:7b", "llm.model", "qwen2.5:7b"),
    ("MADOI_LLM_AUTODETECT_LOCAL", "0", "llm.autodetect_local", False),
    ("MADOI_BRIDGE_PORT", "9001", "bridge.port", 9001),
    ("MADOI_BRIDGE_DIALECT", "legacy", "bridge.dialect", "legacy"),
    ("MADOI_BRIDGE_CLIENT_ANSWERS", "vision, speak", "bridge.client_answers", ["vision", "speak"]),
    ("MADOI_NETWORK_ENABLED", "1", "network.enabled", True),
    ("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/4001", "network.listen", "/ip4/127.0.0.1/tcp/4001"),
    ("MADOI_NETWORK_PEERS", "/ip4/10.0.0.2/tcp/4001,/ip4/10.0.0.3/tcp/4001", "network.peers",
     ["/ip4/10.0.0.2/tcp/4001", "/ip4/10.0.0.3/tcp/4001"]),
    ("MADOI_NETWORK_MDNS", "false", "network.mdns", False),
    ("MADOI_VOICE_ENABLED", "0", "voice.enabled", False),
    ("MADOI_VOICE_OUTPUT_DIR", "/tmp/speech", "voice.output_dir", Path("/tmp/speech")),
    ("MADOI_VOICE_INPUT_ON", "1", "voice_input.on", True),
    ("MADOI_VOICE_INPUT_DEVICE", "file:/tmp/hello.wav", "voice_input.device", "file:/tmp/hello.wav"),
    ("MADOI_VOICE_INPUT_END_SILENCE_S", "0.8", "voice_input.end_silence_s", 0.8),
    ("MADOI_CONVERSATION_TURN_CAP", "8", "conversation.turn_cap", 8),
    ("MADOI_CONVERSATION_WARM_PROMPTS", "0", "conversation.warm_prompts", False),
    ("MADOI_SEARCH_FOLDERS", os.pathsep.join(["/notes", "/papers"]), "search.folders",
     [Path("/notes"), Path("/papers")]),
]


@pytest.mark.parametrize(("name", "value", "key", "expected"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_each_documented_variable_sets_its_setting_over_the_file(
        madoi_home: Path, name: str, value: str, key: str, expected: object) -> None:
    madoi_home.mkdir(parents=True)
    (madoi_home / "settings.toml").write_text(
        '[general]\nlanguage = "ja"\ntheme = "light"\nuser_name = "File"\n[camera]\nsource = "2"\n'
        '[conversation]\nturn_cap = 20\n', encoding="utf-8")
    loaded = load_settings({"MADOI_HOME": str(madoi_home), name: value})
    section, field = key.split(".")
    assert loaded.problems == []
    assert getattr(getattr(loaded.settings, section), field) == expected


def test_the_secrets_come_from_the_environment_and_madoi_home_moves_everything(tmp_path: Path) -> None:
    loaded = load_settings({"MADOI_HOME": str(tmp_path), "MADOI_LLM_API_KEY": "sk-1", "MADOI_BRIDGE_TOKEN": "t-2"})
    assert loaded.paths.settings_file == tmp_path / "settings.toml"
    assert loaded.settings.llm.api_key is not None
    assert loaded.settings.llm.api_key.get_secret_value() == "sk-1"
    assert loaded.settings.bridge.token is not None
    assert loaded.settings.bridge.token.get_secret_value() == "t-2"


def test_the_full_name_wins_over_its_short_one_and_other_names_are_no_settings(tmp_path: Path) -> None:
    loaded = load_settings({"MADOI_HOME": str(tmp_path), "MADOI_CAMERA": "none", "MADOI_CAMERA_SOURCE": "3",
                            "MADOI_LLM": "anything", "MADOI_LLM_MODEL": "m", "MADOI_TEST_CACHE": "/tmp/c",
                            "MADOI_VOICE_INPUT_DEVICE": "mic"})
    assert loaded.problems == []  # MADOI_VOICE_INPUT_DEVICE is no field of [voice]: not a problem there
    assert loaded.settings.camera.source == "3"
    assert loaded.settings.llm.model == "m"  # MADOI_LLM (no setting) hides nothing
    assert loaded.settings.voice_input.device == "mic"
