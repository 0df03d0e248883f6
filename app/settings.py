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
from typing import Any, Final, Literal

import platformdirs
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from companions.mcp_config import McpServer

log = logging.getLogger(__name__)

APP_NAME: Final = "madoi"
SETTINGS_FILE: Final = "settings.toml"
ENV_PREFIX: Final = "MADOI_"
# No model server people run uses it (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM and llama-cpp-python 8000,
# text-generation-webui 5000/7860, KoboldCpp 5001), so the bridge never takes their port nor answers their clients.
DEFAULT_BRIDGE_PORT: Final = 8737
ENV_ALIASES: Final[dict[str, tuple[str, str]]] = {
    "MADOI_CAMERA": ("camera", "source"),
    "MADOI_LANGUAGE": ("general", "language"),
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def system_language(environ: os._Environ[str] | dict[str, str] | None = None) -> Literal["ja", "en"]:
    """Japanese on a Japanese system, English elsewhere (``LANG=C.UTF-8`` too): the language until one is chosen.

    The POSIX variables in their order of precedence, else the platform's locale (Windows has no ``LANG``)."""
    env = os.environ if environ is None else environ
    name = next((env[v] for v in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE") if env.get(v)), None)
    if name is None:
        import locale

        name = locale.getlocale()[0] or ""
    return "ja" if name.lower().startswith("ja") else "en"


class GeneralSettings(_Section):
    language: Literal["ja", "en"] = Field(default_factory=system_language)
    theme: Literal["system", "light", "dark"] = "system"
    user_name: str = Field(default="user", min_length=1, max_length=64)


class LLMSettings(_Section):
    """The default endpoint; a companion card may name its own."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    autodetect_local: bool = True

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


class CameraSettings(_Section):
    source: str = Field(default="0", description="device index, video file path, stream URL, or 'none'")
    preview_fps: float = Field(default=10.0, gt=0, le=60)

    @property
    def enabled(self) -> bool:
        return self.source.strip().lower() not in {"", "none", "off"}


class VoiceSettings(_Section):
    enabled: bool = True
    rate: int = Field(default=170, ge=50, le=400)
    volume: float = Field(default=1.0, ge=0.0, le=1.0)
    output_dir: Path | None = Field(default=None, description="write speech to WAV files here instead of playing it")


class BridgeSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_BRIDGE_PORT, ge=0, le=65535, description="0 turns the bridge off")
    token: SecretStr | None = None
    max_frame_bytes: int = Field(default=1_048_576, ge=1024)
    max_frames_per_second: float = Field(default=50.0, gt=0)
    # Clients whose URL, hello or first frame does not say: "reference" (the firehose's bare JSON-RPC bodies),
    # "legacy" (kyoko's flat items) or "madoi" ({topic, body}, states too). See app/bridge/dialects.py.
    dialect: Literal["reference", "legacy", "madoi"] = "reference"
    # Query types every connected client is asked before the app's camera / voice (app/bridge/answering.py).
    client_answers: list[Literal["vision", "speak"]] = Field(default_factory=list)
    client_timeout_s: float = Field(default=3.0, gt=0, le=60, description="then the app answers itself")

    @field_validator("client_answers", mode="before")
    @classmethod
    def _comma_separated_types(cls, value: Any) -> Any:  # MADOI_BRIDGE_CLIENT_ANSWERS=vision,speak
        return [t.strip() for t in value.split(",") if t.strip()] if isinstance(value, str) else value

    @property
    def enabled(self) -> bool:
        return self.port != 0


class ConversationSettings(_Section):
    vote_deadline_s: float = Field(default=4.0, gt=0, le=60)
    turn_cap: int = Field(default=12, ge=1, le=1000)
    # While the conversation is idle, the likely next speaker's prompt is evaluated on a local model server so that
    # the user's next message is answered sooner (companions/conversation/warming.py).
    warm_prompts: bool = True


class SearchSettings(_Section):
    folders: list[Path] = Field(default_factory=list)


class CompanionSettings(_Section):
    """One companion's choices over its card (``[companions.<id>]``): its model (on its card's endpoint or the
    default one, or on ``base_url``) and its voice per language (an engine voice id, or a language, with an espeak
    variant: ``jpx/ja+f3``). Unset: what the card says."""

    model: str | None = None
    base_url: str | None = None
    voice: dict[Literal["ja", "en"], str] = Field(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value or None

    @field_validator("model")
    @classmethod
    def _stripped(cls, value: str | None) -> str | None:
        return (value or "").strip() or None


class McpSettings(_Section):
    """MCP servers whose tools every companion may use (``[[mcp.servers]]``; a card lists its own under ``mcp``)."""

    servers: list[McpServer] = Field(default_factory=list)


class ResearchSettings(_Section):
    """The research agent searches the web too when ``web_search_url`` names a SearXNG instance (off by default)."""

    web_search_url: str | None = None
    web_results: int = Field(default=5, ge=1, le=20)
    web_timeout_s: float = Field(default=10.0, gt=0, le=60)

    @field_validator("web_search_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value or None


class NetworkSettings(_Section):
    """The reference's peer-to-peer network (libp2p): companions on other machines take part (app/network)."""

    enabled: bool = False
    listen: str = "/ip4/0.0.0.0/tcp/0"
    peers: list[str] = Field(default_factory=list, description="multiaddrs to dial (MADOI_NETWORK_PEERS: commas)")
    mdns: bool = True

    @field_validator("peers", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else value


_SECTIONS: Final[dict[str, type[_Section]]] = {
    "general": GeneralSettings,
    "llm": LLMSettings,
    "camera": CameraSettings,
    "voice": VoiceSettings,
    "bridge": BridgeSettings,
    "conversation": ConversationSettings,
    "search": SearchSettings,
    "mcp": McpSettings,
    "research": ResearchSettings,
    "network": NetworkSettings,
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
    bridge: BridgeSettings = Field(default_factory=BridgeSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    companions: dict[str, CompanionSettings] = Field(default_factory=dict)  # by companion id

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
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
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


def _valid_keys(model: type[_Section], value: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
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
    for problem in problems:
        log.warning("settings: %s", problem)
    return LoadedSettings(settings=settings, paths=paths, problems=problems)


def settings_to_toml(settings: Settings) -> str:
    """The TOML text of ``settings``; secrets are left out (they belong in the keyring)."""
    data = settings.model_dump(mode="json", exclude_none=True)
    data.get("llm", {}).pop("api_key", None)
    data.get("bridge", {}).pop("token", None)
    chosen = {i: {k: v for k, v in c.items() if v} for i, c in data.pop("companions", {}).items()}
    if any(chosen.values()):  # only the companions the user chose something for
        data["companions"] = {i: c for i, c in chosen.items() if c}
    return tomli_w.dumps(data)


def save_settings(settings: Settings, paths: Paths,
                  environ: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Writes the settings file atomically (a crash leaves either the old or the new file).

    A key a ``MADOI_*`` variable overrides is an override for this run, never a setting: the file keeps what it had
    for it (or nothing)."""
    overridden = env_overrides(os.environ if environ is None else environ)
    text = settings_to_toml(settings)
    if overridden:
        data = tomllib.loads(text)
        try:
            on_file = tomllib.loads(paths.settings_file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            on_file = {}
        for section, fields in overridden.items():
            for name in fields:
                kept = on_file.get(section, {}).get(name) if isinstance(on_file.get(section), dict) else None
                if kept is not None:
                    data.setdefault(section, {})[name] = kept
                else:
                    data.get(section, {}).pop(name, None)
        text = tomli_w.dumps(data)
    paths.ensure()
    tmp = paths.settings_file.with_suffix(".toml.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, paths.settings_file)
