"""The settings store: the one place this program's settings are held, written and changed.

Every part that changes the settings goes through the program's :class:`SettingsStore` (what
:func:`app.settings.model.load_settings` returns; the runtime's ``loaded``):

- :meth:`SettingsStore.write` (or :meth:`SettingsStore.save`, on a worker thread) writes what changed into
  ``settings.toml``: a merge under the file's lock, so what other programs wrote meanwhile stays (``madoi companions
  approve`` while the window is open; app/settings/merge.py), then an atomic write readable by the user only;
- :meth:`SettingsStore.apply` makes new settings the current ones and publishes the change, once, as a
  :class:`~app.settings.changes.SettingsChanged` to every listener subscribed to a key that changed
  (:meth:`SettingsStore.subscribe`): the running parts follow the settings that way (app/runtime/runtime.py).

A key a ``MADOI_*`` variable sets is an override for this run, never a setting: the file keeps what it had for it
(or nothing).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import tomli_w

from app.settings.changes import SettingsChanged
from app.settings.environment import environment_settings
from app.settings.merge import merged_write
from app.settings.paths import Paths
from app.settings.sections import CompanionSettings, Settings

SettingsListener: TypeAlias = Callable[[SettingsChanged], Awaitable[None]]


def settings_data(settings: Settings) -> dict[str, Any]:
    """What the settings file holds for ``settings``; secrets are left out (they belong in the keyring)."""
    data = settings.model_dump(mode="json", exclude_none=True)
    data.get("llm", {}).pop("api_key", None)
    data.get("bridge", {}).pop("token", None)
    unset = CompanionSettings().model_dump(mode="json")  # what the card says (and memory on)
    chosen = {i: {k: v for k, v in c.items() if v != unset.get(k) and v not in ("", {}, [])}
              for i, c in data.pop("companions", {}).items()}
    if any(chosen.values()):  # only the companions the user chose something for
        data["companions"] = {i: c for i, c in chosen.items() if c}
    return data


@dataclass(frozen=True)
class _Subscription:
    listener: SettingsListener
    keys: tuple[str, ...]


@dataclass
class SettingsStore:
    """This program's settings (``settings``: the current ones), where they live (``paths``) and what was wrong with
    them when read (``problems``). ``environ`` holds the ``MADOI_*`` overrides of this run (the process's by
    default), which are never written."""

    settings: Settings
    paths: Paths
    problems: list[str] = field(default_factory=list)
    environ: Mapping[str, str] | None = None
    _subscriptions: list[_Subscription] = field(default_factory=list, init=False, repr=False)

    def write(self, settings: Settings | None = None) -> None:
        """Writes what changed in ``settings`` (the current ones by default) since they were read or last written,
        keeping what other programs wrote meanwhile; settings never read from the file (made in code) replace it.
        Blocks on the file's lock and the disk (:meth:`save` from the loop).

        Raises:
            OSError: the file cannot be written (the settings still hold for this run).
        """
        chosen = self.settings if settings is None else settings
        overridden = environment_settings(os.environ if self.environ is None else self.environ)
        data = settings_data(chosen)
        self.paths.ensure()
        merged_write(self.paths.settings_file, chosen._as_read, data, overridden, tomli_w.dumps)
        chosen._as_read = data

    async def save(self, settings: Settings | None = None) -> None:
        """:meth:`write` on a worker thread."""
        await asyncio.to_thread(self.write, settings)

    def subscribe(self, listener: SettingsListener, *keys: str) -> Callable[[], None]:
        """Calls ``listener`` with each change that touches one of ``keys`` (sections or ``section.field``; none:
        every change), in the order of subscription; returns what ends the subscription."""
        subscription = _Subscription(listener, keys)
        self._subscriptions.append(subscription)
        return lambda: self._subscriptions.remove(subscription)

    async def apply(self, settings: Settings) -> SettingsChanged:
        """Makes ``settings`` the current ones and publishes what changed to the listeners subscribed to it, each in
        turn; a listener's exception stops the ones after it and is raised here (the settings stay current)."""
        change = SettingsChanged.between(self.settings, settings)
        self.settings = settings
        for subscription in list(self._subscriptions):
            if change.keys and (not subscription.keys or change.touches(*subscription.keys)):
                await subscription.listener(change)
        return change
