"""Settings: one validated model, read from ``settings.toml`` in the config dir, overridden by ``MADOI_*`` variables.

Precedence (highest first): explicit arguments, environment variables, the TOML file, defaults.

Environment variables are ``MADOI_<SECTION>_<FIELD>`` (``MADOI_LLM_BASE_URL``, ``MADOI_BRIDGE_PORT`` ...) plus the
short forms in :data:`ENV_ALIASES` (``MADOI_CAMERA``). ``MADOI_HOME`` moves both the config and the data directory.

A broken file never stops the app: invalid keys are reported (:attr:`LoadedSettings.problems`, with the key and
the reason) and replaced by their defaults; the file itself is never rewritten except by :func:`save_settings`.
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import platformdirs
import tomli_w
from pydantic import Field, PrivateAttr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.settings.merge import merged_write
from app.settings.sections import (
    DEFAULT_BRIDGE_PORT,
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
    SettingsSection,
    TrustSettings,
    VoiceInputSettings,
    VoiceSettings,
    system_language,
)

__all__ = [  # the sections are defined in app/settings/sections.py and belong to the settings' interface
    "DEFAULT_BRIDGE_PORT", "BridgeSettings", "CameraSettings", "CompanionSettings", "ConversationSettings",
    "GeneralSettings", "LLMSettings", "LoadedSettings", "McpSettings", "NetworkSettings", "Paths",
    "ResearchSettings", "SearchSettings", "Settings", "TrustSettings", "VoiceInputSettings", "VoiceSettings",
    "env_overrides",
    "load_settings", "save_settings", "settings_to_toml", "system_language",
]

log = logging.getLogger(__name__)

APP_NAME: Final = "madoi"
SETTINGS_FILE: Final = "settings.toml"
ENV_PREFIX: Final = "MADOI_"
ENV_ALIASES: Final[dict[str, tuple[str, str]]] = {
    "MADOI_CAMERA": ("camera", "source"),
    "MADOI_LANGUAGE": ("general", "language"),
}


_SECTIONS: Final[dict[str, type[SettingsSection]]] = {
    "general": GeneralSettings,
    "llm": LLMSettings,
    "camera": CameraSettings,
    "voice": VoiceSettings,
    "voice_input": VoiceInputSettings,
    "bridge": BridgeSettings,
    "conversation": ConversationSettings,
    "search": SearchSettings,
    "mcp": McpSettings,
    "research": ResearchSettings,
    "network": NetworkSettings,
    "trust": TrustSettings,
}


def env_overrides(environ: os._Environ[str] | dict[str, str]) -> dict[str, Any]:
    """The nested settings dict that the ``MADOI_*`` variables of ``environ`` describe."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        target = ENV_ALIASES.get(name)
        if target is None:
            rest = name[len(ENV_PREFIX):].lower()
            for section, model in _SECTIONS.items():
                if rest.startswith(section + "_") and rest[len(section) + 1:] in model.model_fields:
                    target = (section, rest[len(section) + 1:])
                    break
        if target is not None:
            section_name, field_name = target
            if field_name == "folders":
                out.setdefault(section_name, {})[field_name] = [p for p in value.split(os.pathsep) if p]
            else:
                out.setdefault(section_name, {})[field_name] = value
    return out


class Settings(BaseSettings):
    """Everything the user can configure."""

    model_config = SettingsConfigDict(extra="ignore", validate_assignment=True)

    general: GeneralSettings = Field(default_factory=GeneralSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    camera: CameraSettings = Field(default_factory=CameraSettings)
    voice: VoiceSettings = Field(default_factory=VoiceSettings)
    voice_input: VoiceInputSettings = Field(default_factory=VoiceInputSettings)
    bridge: BridgeSettings = Field(default_factory=BridgeSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    trust: TrustSettings = Field(default_factory=TrustSettings)
    companions: dict[str, CompanionSettings] = Field(default_factory=dict)  # by companion id
    # The file's data as these settings stood when read or last written (settings_data): a write changes only what
    # differs from it (app/settings/merge.py). Copies (model_copy, as the dialog makes) keep it.
    _as_read: dict[str, Any] | None = PrivateAttr(default=None)

    def companion(self, companion_id: str) -> CompanionSettings:
        """The user's choices for one companion (all unset when none were made)."""
        return self.companions.get(companion_id) or CompanionSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # load_settings() layers file and environment itself, key by key, so that one bad value falls back to
        # its default instead of failing the whole model as pydantic-settings' own sources would.
        return (init_settings,)


@dataclass(frozen=True)
class Paths:
    """Where Madoi keeps its files."""

    config_dir: Path
    data_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.config_dir / SETTINGS_FILE

    @property
    def database(self) -> Path:
        return self.data_dir / "madoi.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "madoi.log"

    @property
    def cards_dir(self) -> Path:
        return self.config_dir / "companions"

    def ensure(self) -> Paths:
        """Creates both directories readable by the user only, and tightens files an older Madoi left readable
        by others (app/storage/private_files.py)."""
        from app.storage.private_files import private_dir, tighten

        private_dir(self.config_dir)
        private_dir(self.data_dir)
        tighten([self.config_dir, self.data_dir])
        return self

    @classmethod
    def resolve(cls, environ: os._Environ[str] | dict[str, str] | None = None) -> Paths:
        env = os.environ if environ is None else environ
        home = env.get("MADOI_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(config_dir=root, data_dir=root)
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        )


@dataclass
class LoadedSettings:
    settings: Settings
    paths: Paths
    problems: list[str] = field(default_factory=list)


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
        model = _SECTIONS.get(section)
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


def load_settings(environ: os._Environ[str] | dict[str, str] | None = None) -> LoadedSettings:
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
    data = _merge(data, _validate_sections(env_overrides(env), "environment", problems))
    settings = Settings.model_validate(data)
    settings._as_read = settings_data(settings)
    for problem in problems:
        log.warning("settings: %s", problem)
    return LoadedSettings(settings=settings, paths=paths, problems=problems)


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


def settings_to_toml(settings: Settings) -> str:
    """The TOML text of ``settings``; secrets are left out (they belong in the keyring)."""
    return tomli_w.dumps(settings_data(settings))


def save_settings(settings: Settings, paths: Paths,
                  environ: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Writes what changed in ``settings`` since they were read (or last written) into the settings file, keeping
    what other programs wrote there meanwhile (``madoi companions approve`` while the window is open): a merge under
    a lock, then an atomic write (a crash leaves either the old or the new file; temp file, fsync, rename, fsync of
    the directory), readable by the user only. See app/settings/merge.py. Settings never read from the file (made
    in code) replace it.

    A key a ``MADOI_*`` variable overrides is an override for this run, never a setting: the file keeps what it had
    for it (or nothing)."""
    overridden = env_overrides(os.environ if environ is None else environ)
    data = settings_data(settings)
    paths.ensure()
    merged_write(paths.settings_file, settings._as_read, data, overridden, tomli_w.dumps)
    settings._as_read = data
