"""Secrets (the LLM API key, the bridge token) in the OS keyring, else in a file only the user can read.

Without a working keyring (a desktop without a secret service, a server, the keyring locked or failing) a secret
the user saves is kept in ``<data dir>/secrets.json``, mode 0600 in a 0700 directory, written atomically: it
survives a restart, and the settings dialog says where it is (never silently lost). Only when that file cannot be
written either is the secret kept in memory for this session, and :meth:`SecretStore.set` says so.

Secrets never go to the settings TOML (``settings_to_toml`` drops them) nor to logs: this module logs only the
*name* of a secret and where it went, and registers every value it hands out with :func:`app.runtime.logs.hide`. Keyring
calls may talk to a daemon over D-Bus, so the async helpers run them in an executor thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Final, Literal

import keyring
import keyring.backend
import keyring.errors
from pydantic import SecretStr

from app.runtime.logs import hide
from app.settings.model import Paths, Settings
from app.storage.private_files import private_dir
from companions.common.atomic_write import write_atomically

log = logging.getLogger(__name__)

SERVICE: Final = "madoi"
LLM_API_KEY: Final = "llm_api_key"
BRIDGE_TOKEN: Final = "bridge_token"
SECRETS_FILE: Final = "secrets.json"
Where = Literal["keyring", "file", "session"]


def _usable(backend: keyring.backend.KeyringBackend) -> bool:
    # keyring's "fail" backend (priority 0) is what get_keyring() returns when no real store exists.
    try:
        return float(backend.priority) > 0
    except Exception:  # a backend whose priority check itself fails is not usable
        return False


class SecretStore:
    """Reads and writes named secrets: the OS keyring, else ``fallback_file`` (0600), else process memory.

    ``fallback_file`` defaults to ``secrets.json`` in the data directory of the environment's paths
    (``MADOI_HOME``); :meth:`for_paths` names it for given paths."""

    def __init__(self, service: str = SERVICE, backend: keyring.backend.KeyringBackend | None = None,
                 fallback_file: Path | None = None) -> None:
        self.service = service
        self._backend = backend if backend is not None else keyring.get_keyring()
        self._keyring_ok = _usable(self._backend)
        self.fallback_file = fallback_file if fallback_file is not None else Paths.resolve().data_dir / SECRETS_FILE
        self._session: dict[str, str] = {}
        self._file_lock = threading.Lock()  # the dialog saves from an executor thread

    @classmethod
    def for_paths(cls, paths: Paths, *, backend: keyring.backend.KeyringBackend | None = None) -> SecretStore:
        return cls(backend=backend, fallback_file=paths.data_dir / SECRETS_FILE)

    @property
    def where(self) -> Where:
        """Where a secret saved now goes: ``keyring`` or ``file`` (``session`` only after the file failed)."""
        if self._keyring_ok:
            return "keyring"
        return "session" if self._session else "file"

    @property
    def persistent(self) -> bool:
        """True when secrets saved now survive a restart (the keyring or the fallback file)."""
        return self.where != "session"

    # --- the fallback file -----------------------------------------------------------------------------------

    def _read_file(self) -> dict[str, str]:
        try:
            data = json.loads(self.fallback_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            log.warning("secrets: %s cannot be read (%s); its secrets are not used", self.fallback_file,
                        type(err).__name__)
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(data, dict) else {}

    def _write_file(self, name: str, value: str | None) -> bool:
        """Sets (or with None removes) ``name`` in the file; False when the file cannot be written."""
        with self._file_lock:
            stored = self._read_file()
            if value is None and name not in stored:
                return True
            if value is None:
                stored.pop(name)
            else:
                stored[name] = value
            try:
                private_dir(self.fallback_file.parent)
                write_atomically(self.fallback_file, json.dumps(stored, indent=1) + "\n")
            except OSError as err:
                log.warning("secrets: %s cannot be written (%s)", self.fallback_file, type(err).__name__)
                return False
            return True

    # --- the store -------------------------------------------------------------------------------------------

    def get(self, name: str) -> str | None:
        value = self._session.get(name)
        if value is None and self._keyring_ok:
            try:
                value = self._backend.get_password(self.service, name)
            except keyring.errors.KeyringError as err:
                self._fall_back(f"reading {name}", err)
        if value is None:
            value = self._read_file().get(name)  # saved while the keyring was missing
        hide(value)
        return value

    def set(self, name: str, value: str | None) -> Where:
        """Stores ``value`` (``None`` or empty deletes it) and says where it went."""
        if not value:
            self.delete(name)
            return self.where
        hide(value)
        if self._keyring_ok:
            try:
                self._backend.set_password(self.service, name, value)
                self._session.pop(name, None)
                self._write_file(name, None)  # a copy kept while the keyring was missing is not needed now
                log.info("secrets: %s stored in the OS keyring", name)
                return "keyring"
            except keyring.errors.KeyringError as err:
                self._fall_back(f"storing {name}", err)
        if self._write_file(name, value):
            self._session.pop(name, None)
            log.info("secrets: %s kept in %s, readable only by you (no OS keyring)", name, self.fallback_file)
            return "file"
        self._session[name] = value
        log.warning("secrets: %s kept in memory for this session only (no OS keyring, %s not writable)",
                    name, self.fallback_file)
        return "session"

    def delete(self, name: str) -> None:
        self._session.pop(name, None)
        if self._keyring_ok:
            try:
                self._backend.delete_password(self.service, name)
            except keyring.errors.PasswordDeleteError:
                pass  # nothing stored: already the wanted state
            except keyring.errors.KeyringError as err:
                self._fall_back(f"deleting {name}", err)
        self._write_file(name, None)

    def _fall_back(self, doing: str, err: Exception) -> None:
        log.warning("secrets: the OS keyring failed while %s (%s); using %s", doing, type(err).__name__,
                    self.fallback_file)
        self._keyring_ok = False

    async def aget(self, name: str) -> str | None:
        return await asyncio.get_running_loop().run_in_executor(None, self.get, name)

    async def aset(self, name: str, value: str | None) -> Where:
        return await asyncio.get_running_loop().run_in_executor(None, self.set, name, value)

    def fill(self, settings: Settings) -> Settings:
        """``settings`` with the stored API key and bridge token filled in where the settings have none.

        Environment variables (``MADOI_LLM_API_KEY``) win over the store because they are already set. Every
        secret the settings then hold is masked in the logs from now on."""
        llm, bridge = settings.llm, settings.bridge
        if llm.api_key is None and (key := self.get(LLM_API_KEY)):
            llm = llm.model_copy(update={"api_key": SecretStr(key)})
        if bridge.token is None and (token := self.get(BRIDGE_TOKEN)):
            bridge = bridge.model_copy(update={"token": SecretStr(token)})
        hide(*(s.get_secret_value() for s in (llm.api_key, bridge.token) if s is not None))
        return settings.model_copy(update={"llm": llm, "bridge": bridge})

    def store_from(self, settings: Settings) -> dict[str, Where]:
        """Writes the settings' secrets to the store; returns where each one went."""
        key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
        token = settings.bridge.token.get_secret_value() if settings.bridge.token else None
        return {LLM_API_KEY: self.set(LLM_API_KEY, key), BRIDGE_TOKEN: self.set(BRIDGE_TOKEN, token)}
