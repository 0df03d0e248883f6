"""Settings: one validated model, read from ``settings.toml`` in the config dir, overridden by ``MADOI_*`` variables.

Precedence (highest first): explicit arguments, environment variables, the TOML file, defaults.

Environment variables are ``MADOI_<SECTION>_<FIELD>`` (``MADOI_LLM_BASE_URL``, ``MADOI_BRIDGE_PORT`` ...) plus the
short forms in :data:`~app.settings.environment.ENV_ALIASES` (``MADOI_CAMERA``), read by pydantic-settings' own
environment source (app/settings/environment.py). ``MADOI_HOME`` moves both the config and the data directory.

A broken file never stops the app: invalid keys are reported (:attr:`SettingsStore.problems`, with the key and
the reason) and replaced by their defaults; the file itself is never rewritten except through the program's
:class:`~app.settings.store.SettingsStore`, which :func:`load_settings` returns.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.settings.environment import environment_settings
from app.settings.paths import Paths
from app.settings.sections import (
    DEFAULT_BRIDGE_PORT,
    SECTIONS,
    BridgeSettings,
    CameraSettings,
    CompanionSettings,
    ConversationSettings,
    GeneralSettings,
    LLMSettings,
    McpSettings,
    NetworkSettings,
    ResearchSettings,
    SearchSettings,
    Settings,
    SettingsSection,
    TrustSettings,
    VoiceInputSettings,
    VoiceSettings,
    system_language,
)
from app.settings.store import SettingsStore, settings_data

__all__ = [  # the sections, the paths and the store are defined beside this module and belong to its interface
    "DEFAULT_BRIDGE_PORT", "BridgeSettings", "CameraSettings", "CompanionSettings", "ConversationSettings",
    "GeneralSettings", "LLMSettings", "McpSettings", "NetworkSettings", "Paths",
    "ResearchSettings", "SearchSettings", "Settings", "SettingsStore", "TrustSettings", "VoiceInputSettings",
    "VoiceSettings", "load_settings", "system_language",
]

log = logging.getLogger(__name__)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _valid_keys(model: type[SettingsSection], value: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """The keys of ``value`` that ``model`` accepts; every invalid one becomes a problem naming it."""
    kept = dict(value)
    for _ in range(len(value) + 1):
        try:
            model.model_validate(kept)
            break
        except ValidationError as err:
            for e in err.errors(include_url=False):
                key = str(e["loc"][0]) if e["loc"] else "?"
                if key in kept:
                    problems.append(f"{where}.{key}: {e['msg']}; using the default")
                    kept.pop(key)
    return kept


def _validate_sections(raw: dict[str, Any], origin: str, problems: list[str]) -> dict[str, Any]:
    """Keeps the valid keys of ``raw``; every invalid one becomes a problem naming it and falls back."""
    clean: dict[str, Any] = {}
    for section, value in raw.items():
        model = SECTIONS.get(section)
        if model is None and section != "companions":
            problems.append(f"{origin}: unknown section [{section}] ignored")
            continue
        if not isinstance(value, dict):
            problems.append(f"{origin}: [{section}] must be a table, ignored")
            continue
        if model is not None:
            clean[section] = _valid_keys(model, value, f"{origin}: {section}", problems)
            continue
        clean[section] = {}
        for companion_id, choices in value.items():  # [companions.<id>]
            if isinstance(choices, dict):
                clean[section][companion_id] = _valid_keys(CompanionSettings, choices,
                                                           f"{origin}: companions.{companion_id}", problems)
            else:
                problems.append(f"{origin}: [companions.{companion_id}] must be a table, ignored")
    return clean


def load_settings(environ: Mapping[str, str] | None = None) -> SettingsStore:
    """Reads the settings file and environment; never raises for bad content."""
    env = os.environ if environ is None else environ
    paths = Paths.resolve(env)
    problems: list[str] = []
    from_file: dict[str, Any] = {}
    if paths.settings_file.exists():
        try:
            from_file = tomllib.loads(paths.settings_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as err:
            problems.append(f"{paths.settings_file}: unreadable ({err}); using defaults")
    data = _validate_sections(from_file, str(paths.settings_file), problems)
    data = _merge(data, _validate_sections(environment_settings(env), "environment", problems))
    settings = Settings.model_validate(data)
    settings._as_read = settings_data(settings)
    for problem in problems:
        log.warning("settings: %s", problem)
    return SettingsStore(settings, paths, problems, environ)
