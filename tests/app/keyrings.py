"""A keyring backend that keeps secrets in a dict: the real ``keyring`` API without the desktop's secret store."""

from __future__ import annotations

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors


class DictKeyring(keyring.backend.KeyringBackend):
    """Stands in for the OS secret service (the port this module adapts); this machine has none."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)
