"""Secrets go to the OS keyring when one works, otherwise stay in memory for the session; never to the TOML."""

from __future__ import annotations

import logging
from pathlib import Path

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest
from pydantic import SecretStr

from app.settings.model import Settings, load_settings
from app.settings.secrets import BRIDGE_TOKEN, LLM_API_KEY, SecretStore
from tests.app.keyrings import DictKeyring


class LockedKeyring(DictKeyring):
    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.KeyringLocked("the user dismissed the unlock prompt")


def test_without_a_keyring_a_secret_is_kept_in_a_file_only_the_user_can_read(
        madoi_home: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    paths = load_settings().paths
    store = SecretStore.for_paths(paths, backend=keyring.backends.fail.Keyring())  # what this machine really has
    assert store.persistent
    assert store.where == "file"
    assert store.set(LLM_API_KEY, "sk-kept-in-a-file-123456") == "file"
    kept = paths.data_dir / "secrets.json"
    assert kept.stat().st_mode & 0o777 == 0o600
    assert paths.data_dir.stat().st_mode & 0o777 == 0o700
    again = SecretStore.for_paths(paths, backend=keyring.backends.fail.Keyring())  # after a restart
    assert again.get(LLM_API_KEY) == "sk-kept-in-a-file-123456"
    assert "readable only by you" in caplog.text
    assert "sk-kept" not in caplog.text
    again.set(LLM_API_KEY, None)
    assert SecretStore.for_paths(paths, backend=keyring.backends.fail.Keyring()).get(LLM_API_KEY) is None


def test_when_the_file_cannot_be_written_either_the_secret_lives_for_the_session_and_says_so(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data directory should be")
    store = SecretStore(backend=keyring.backends.fail.Keyring(), fallback_file=blocked / "secrets.json")
    assert store.set(BRIDGE_TOKEN, "tok-session-only-1") == "session"
    assert store.where == "session"
    assert not store.persistent
    assert store.get(BRIDGE_TOKEN) == "tok-session-only-1"
    assert "this session only" in caplog.text


def test_the_default_backend_is_the_systems_and_works_either_way(madoi_home: Path) -> None:
    store = SecretStore(service="madoi-test")
    where = store.set("probe", "value")
    assert where == ("keyring" if store.where == "keyring" else "file")
    assert store.get("probe") == "value"
    store.delete("probe")
    assert store.get("probe") is None


def test_with_a_keyring_the_key_survives_a_restart_and_can_be_deleted() -> None:
    backend = DictKeyring()
    assert SecretStore(backend=backend).set(LLM_API_KEY, "sk-persist-abcdef") == "keyring"
    again = SecretStore(backend=backend)
    assert again.get(LLM_API_KEY) == "sk-persist-abcdef"
    again.set(LLM_API_KEY, "")
    assert again.get(LLM_API_KEY) is None
    again.delete(LLM_API_KEY)  # deleting twice is fine


def test_a_failing_keyring_falls_back_to_the_file_instead_of_losing_the_key(madoi_home: Path) -> None:
    store = SecretStore.for_paths(load_settings().paths, backend=LockedKeyring())
    assert store.where == "keyring"
    assert store.set(BRIDGE_TOKEN, "tok-123") == "file"
    assert store.where == "file"
    assert store.get(BRIDGE_TOKEN) == "tok-123"
    assert SecretStore.for_paths(load_settings().paths, backend=DictKeyring()).get(BRIDGE_TOKEN) == "tok-123"


def test_fill_and_store_round_trip_while_the_toml_stays_clean(madoi_home: Path) -> None:
    backend = DictKeyring()
    settings = Settings()
    settings.llm.api_key = SecretStr("sk-secret-value-0001")
    settings.bridge.token = SecretStr("bridge-token-xyz")
    assert SecretStore(backend=backend).store_from(settings) == {LLM_API_KEY: "keyring", BRIDGE_TOKEN: "keyring"}
    loaded = load_settings()
    loaded.write(settings)
    toml = loaded.paths.settings_file.read_text(encoding="utf-8")
    assert "sk-secret" not in toml
    assert "bridge-token" not in toml
    filled = SecretStore(backend=backend).fill(load_settings().settings)
    assert filled.llm.api_key is not None
    assert filled.llm.api_key.get_secret_value() == "sk-secret-value-0001"
    assert filled.bridge.token is not None
    assert filled.bridge.token.get_secret_value() == "bridge-token-xyz"


def test_an_explicit_key_from_the_environment_wins_over_the_keyring() -> None:
    backend = DictKeyring()
    SecretStore(backend=backend).set(LLM_API_KEY, "from-keyring")
    settings = Settings()
    settings.llm.api_key = SecretStr("from-env")
    filled = SecretStore(backend=backend).fill(settings)
    assert filled.llm.api_key is not None
    assert filled.llm.api_key.get_secret_value() == "from-env"


async def test_async_access_runs_off_the_loop() -> None:
    store = SecretStore(backend=DictKeyring())
    assert await store.aset(LLM_API_KEY, "k") == "keyring"
    assert await store.aget(LLM_API_KEY) == "k"
