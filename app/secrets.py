"""Secrets (the LLM API key, the bridge token) in the OS keyring, or in memory for this session when there is none.

Secrets never go to the settings TOML (``settings_to_toml`` drops them) nor to logs: this module logs only the
*name* of a secret and where it went. Keyring calls may talk to a daemon over D-Bus, so the async helpers run
them in an executor thread.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final, Literal

import keyring
import keyring.backend
import keyring.errors
from pydantic import SecretStr

from app.settings import Settings

log = logging.getLogger(__name__)

SERVICE: Final = "madoi"
LLM_API_KEY: Final = "llm_api_key"
BRIDGE_TOKEN: Final = "bridge_token"
Where = Literal["keyring", "session"]


def _usable(backend: keyring.backend.KeyringBackend) -> bool:
    # keyring's "fail" backend (priority 0) is what get_keyring() returns when no real store exists.
    try:
        return float(backend.priority) > 0
    except Exception:  # a backend whose priority check itself fails is not usable
        return False


class SecretStore:
    """Reads and writes named secrets; falls back to process memory when the keyring is missing or fails."""

    def __init__(self, service: str = SERVICE, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self.service = service
        self._backend = backend if backend is not None else keyring.get_keyring()
        self._keyring_ok = _usable(self._backend)
        self._session: dict[str, str] = {}

    @property
    def persistent(self) -> bool:
        """True when secrets survive a restart (a working OS keyring); False means memory for this session only."""
        return self._keyring_ok

    def get(self, name: str) -> str | None:
        if name in self._session:
            return self._session[name]
        if not self._keyring_ok:
            return None
        try:
            return self._backend.get_password(self.service, name)
        except keyring.errors.KeyringError as err:
            self._fall_back(f"reading {name}", err)
            return None

    def set(self, name: str, value: str | None) -> Where:
        """Stores ``value`` (``None`` or empty deletes it) and says where it went."""
        if not value:
            self.delete(name)
            return "keyring" if self._keyring_ok else "session"
        if self._keyring_ok:
            try:
                self._backend.set_password(self.service, name, value)
                self._session.pop(name, None)
                log.info("secrets: %s stored in the OS keyring", name)
                return "keyring"
            except keyring.errors.KeyringError as err:
                self._fall_back(f"storing {name}", err)
        self._session[name] = value
        log.info("secrets: %s kept in memory for this session (no OS keyring)", name)
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

    def _fall_back(self, doing: str, err: Exception) -> None:
        log.warning("secrets: the OS keyring failed while %s (%s); using memory for this session",
                    doing, type(err).__name__)
        self._keyring_ok = False

    async def aget(self, name: str) -> str | None:
        return await asyncio.get_running_loop().run_in_executor(None, self.get, name)

    async def aset(self, name: str, value: str | None) -> Where:
        return await asyncio.get_running_loop().run_in_executor(None, self.set, name, value)

    def fill(self, settings: Settings) -> Settings:
        """``settings`` with the stored API key and bridge token filled in where the settings have none.

        Environment variables (``MADOI_LLM_API_KEY``) win over the keyring because they are already set.
        """
        llm, bridge = settings.llm, settings.bridge
        if llm.api_key is None and (key := self.get(LLM_API_KEY)):
            llm = llm.model_copy(update={"api_key": SecretStr(key)})
        if bridge.token is None and (token := self.get(BRIDGE_TOKEN)):
            bridge = bridge.model_copy(update={"token": SecretStr(token)})
        return settings.model_copy(update={"llm": llm, "bridge": bridge})

    def store_from(self, settings: Settings) -> dict[str, Where]:
        """Writes the settings' secrets to the store; returns where each one went."""
        key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
        token = settings.bridge.token.get_secret_value() if settings.bridge.token else None
        return {LLM_API_KEY: self.set(LLM_API_KEY, key), BRIDGE_TOKEN: self.set(BRIDGE_TOKEN, token)}
