"""The settings' sections: one validated pydantic model per ``[section]`` of ``settings.toml``, and :class:`Settings`,
the whole they make (app/settings/model.py reads and layers them, app/settings/store.py holds and writes them)."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from companions.cards.approval import CardApproval
from companions.common.languages import Language
from companions.tools.mcp_config import McpServer
from companions.trust.policy import DEFAULT_ASK_TIMEOUT_S, MAX_DECISIONS, TrustDecision

log = logging.getLogger(__name__)

# No model server people run uses it (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM and llama-cpp-python 8000,
# text-generation-webui 5000/7860, KoboldCpp 5001), so the bridge never takes their port nor answers their clients.
DEFAULT_BRIDGE_PORT: Final = 8737


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value


HttpUrl: TypeAlias = Annotated[str, AfterValidator(_http_url)]


class SettingsSection(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def system_language(environ: os._Environ[str] | dict[str, str] | None = None) -> Language:
    """Japanese on a Japanese system, English elsewhere (``LANG=C.UTF-8`` too): the language until one is chosen.

    The POSIX variables in their order of precedence, else the platform's locale (Windows has no ``LANG``)."""
    env = os.environ if environ is None else environ
    name = next((env[v] for v in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE") if env.get(v)), None)
    if name is None:
        import locale

        name = locale.getlocale()[0] or ""
    return "ja" if name.lower().startswith("ja") else "en"


class GeneralSettings(SettingsSection):
    language: Language = Field(default_factory=system_language)
    theme: Literal["system", "light", "dark"] = "system"
    user_name: str = Field(default="user", min_length=1, max_length=64)


class LLMSettings(SettingsSection):
    """The default endpoint; a companion card may name its own."""

    base_url: HttpUrl | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    autodetect_local: bool = True
    model_file: Path | None = Field(
        default=None, description="a GGUF model Madoi runs itself (llama.cpp) when no base_url is set")


class CameraSettings(SettingsSection):
    source: str = Field(default="0", description="device index, video file path, stream URL, or 'none'")
    preview_fps: float = Field(default=10.0, gt=0, le=60)
    on: bool = Field(default=True, description="the status bar's camera switch: off, nobody looks through the camera")
    notice: bool = Field(default=False, description="let them notice you: watch for someone arriving, leaving or "
                         "coming back (on this computer, a few small frames a second; the camera switch still rules)")

    @property
    def enabled(self) -> bool:
        return self.source.strip().lower() not in {"", "none", "off"}


class VoiceSettings(SettingsSection):
    enabled: bool = True
    rate: int = Field(default=170, ge=50, le=400)
    volume: float = Field(default=1.0, ge=0.0, le=1.0)
    output_dir: Path | None = Field(default=None, description="write speech to WAV files here instead of playing it")
    # VOICEVOX-compatible engines (app/devices/voicevox_discovery.py): those on this machine are looked for, one
    # elsewhere is used only when its URL is given here.
    engines: list[HttpUrl] = Field(default_factory=list, max_length=16, description="VOICEVOX-compatible engines")
    find_engines: bool = Field(default=True, description="look for VOICEVOX and AivisSpeech on this machine")

    @field_validator("engines", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:  # MADOI_VOICE_ENGINES=http://127.0.0.1:50021,http://...
        return [u.strip() for u in value.split(",") if u.strip()] if isinstance(value, str) else value


class VoiceInputSettings(SettingsSection):
    """Talking to the companions (companions/voice_input/): off until the user turns the microphone on."""

    on: bool = Field(default=False, description="the status bar's microphone switch: on, the companions hear you")
    keep_on: bool = Field(default=False, description="a microphone left on opens at the next start (else off)")
    device: str = Field(default="", description="an input device's name ('' the default); file:PATH.wav stands in")
    mode: Literal["hands-free", "push-to-talk"] = "hands-free"
    push_to_talk_key: str = Field(default="F8", max_length=32, description="held to talk, in any mode")
    end_silence_s: float = Field(default=0.5, ge=0.2, le=3.0, description="silence that ends what the user says")
    sensitivity: float = Field(default=0.5, ge=0.0, le=1.0, description="0: loud speech only, 1: the faintest")
    recognizer: Literal["pocketsphinx", "whisper-tiny", "whisper-base", "faster-whisper-base",
                        "faster-whisper-small"] = "pocketsphinx"
    language: Literal["auto", "ja", "en"] = "auto"
    send_at_end: bool = Field(default=True, description="False: the words wait in the message box to be edited")
    echo: Literal["guard", "pause"] = Field(default="guard", description="the companions' own voice in the mic")


# The web pages the bridge admits when nothing else is said: those served from this computer (app/bridge/origins.py).
LOOPBACK_ORIGINS: Final = ("http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*")
_ORIGIN = re.compile(r"https?://(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(:(\*|[0-9]{1,5}))?")


def _origin(value: str) -> str:
    origin = value.strip().lower().rstrip("/")
    match = _ORIGIN.fullmatch(origin)
    if match is None or (match[4] not in (None, "*") and not 0 < int(match[4]) < 65536):
        raise ValueError(f"{value!r} is not a web page's origin: write scheme://host[:port], e.g. "
                         "http://localhost:5173, or http://localhost:* for any port")
    return origin


Origin: TypeAlias = Annotated[str, AfterValidator(_origin)]


class BridgeSettings(SettingsSection):
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
    # Web pages (a handshake with an Origin header) are admitted from these origins only; programs that send no
    # Origin are not concerned. ``http://localhost:*``: any port. See app/bridge/origins.py.
    allowed_origins: list[Origin] = Field(default_factory=lambda: list(LOOPBACK_ORIGINS), max_length=256)
    max_connections: int = Field(default=32, ge=1, le=4096)  # open at once, in all ...
    max_connections_per_address: int = Field(default=8, ge=1, le=4096)  # ... and from one address
    max_messages_per_minute: int = Field(default=30, ge=1)  # what one address may have stored: messages ...
    max_stored_bytes_per_minute: int = Field(default=1_048_576, ge=1024)  # ... and their UTF-8 bytes

    @field_validator("client_answers", "allowed_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:  # MADOI_BRIDGE_CLIENT_ANSWERS=vision,speak
        return [t.strip() for t in value.split(",") if t.strip()] if isinstance(value, str) else value

    @property
    def enabled(self) -> bool:
        return self.port != 0


class ConversationSettings(SettingsSection):
    vote_deadline_s: float = Field(default=4.0, gt=0, le=60)
    turn_cap: int = Field(default=12, ge=1, le=1000)
    # While the conversation is idle, the likely next speaker's prompt is evaluated on a local model server so that
    # the user's next message is answered sooner (companions/conversation/warming.py).
    warm_prompts: bool = True
    # Long-term memory (companions/memory/recall.py): what a companion recalls from earlier conversations goes into each
    # turn's prompt within this many tokens (0: nothing is recalled); notes about the user written while idle
    # (app/memory/notes.py) are off until they are shown to help recall (docs/ARCHITECTURE.md, "Memory").
    recall_tokens: int = Field(default=300, ge=0, le=2000)
    memory_notes: bool = False
    # Speaking first (companions/conversation/speaking_first.py, app/conversations/speaking_first.py): after the user
    # has been quiet this many minutes the companions may speak first (0: never, the default); with noticing on
    # ([camera] notice) they may when it notices the user arrive, come back, someone join them... (``on_notice``).
    # Never within ``speak_first_cooldown_min`` of the last time, nor more than ``speak_first_per_hour`` times an hour.
    speak_first_after_min: int = Field(default=0, ge=0, le=24 * 60)
    speak_first_on_notice: bool = True
    speak_first_cooldown_min: float = Field(default=5.0, ge=0, le=24 * 60)
    speak_first_per_hour: int = Field(default=4, ge=1, le=60)


class SearchSettings(SettingsSection):
    folders: list[Path] = Field(default_factory=list)

    @field_validator("folders", mode="before")
    @classmethod
    def _path_separated(cls, value: Any) -> Any:  # MADOI_SEARCH_FOLDERS=/notes:/papers (";" on Windows)
        return [p for p in value.split(os.pathsep) if p] if isinstance(value, str) else value


class CompanionSettings(SettingsSection):
    """One companion's choices over its card (``[companions.<id>]``): its model (on its card's endpoint or the
    default one, or on ``base_url``) and its voice per language (an engine voice id, or a language, with an espeak
    variant: ``jpx/ja+f3``). Unset: what the card says."""

    model: str | None = None
    base_url: HttpUrl | None = None
    voice: dict[Language, str] = Field(default_factory=dict)
    memory: bool = True  # False: this companion recalls nothing from earlier conversations (the Memory view's switch)

    @field_validator("model")
    @classmethod
    def _stripped(cls, value: str | None) -> str | None:
        return (value or "").strip() or None


class McpSettings(SettingsSection):
    """MCP servers whose tools every companion may use (``[[mcp.servers]]``; a card lists its own under ``mcp``)."""

    servers: list[McpServer] = Field(default_factory=list)


class ResearchSettings(SettingsSection):
    """The research agent searches the web too when ``web_search_url`` names a SearXNG instance (off by default)."""

    web_search_url: HttpUrl | None = None
    web_results: int = Field(default=5, ge=1, le=20)
    web_timeout_s: float = Field(default=10.0, gt=0, le=60)


class NetworkSettings(SettingsSection):
    """The reference's peer-to-peer network (libp2p): companions on other machines take part (app/network)."""

    enabled: bool = False
    listen: str = "/ip4/0.0.0.0/tcp/0"
    peers: list[str] = Field(default_factory=list, description="multiaddrs to dial (MADOI_NETWORK_PEERS: commas)")
    mdns: bool = True

    @field_validator("peers", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else value


class TrustSettings(SettingsSection):
    """What the user decided about sources from outside the window (companions/trust/policy.py): ``[[trust.decisions]]``
    (a source's key ``id@place``, a capability, ``always`` or ``never``), revocable in the settings' Privacy tab;
    and how long a consent prompt waits for an answer before the request is refused."""

    decisions: list[TrustDecision] = Field(default_factory=list, max_length=MAX_DECISIONS)
    ask_timeout_s: float = Field(default=DEFAULT_ASK_TIMEOUT_S, gt=0, le=600)
    # Companion cards whose programs and keys the user approved ([[trust.cards]]: id and digest of what the card
    # runs and sends; a changed card asks again): companions/cards/approval.py.
    cards: list[CardApproval] = Field(default_factory=list, max_length=MAX_DECISIONS)

    @field_validator("decisions", mode="before")
    @classmethod
    def _valid_decisions(cls, value: Any) -> Any:
        """A decision the file got wrong is left out (logged), not every decision with it: its source is asked
        again."""
        if not isinstance(value, list):
            return value
        kept = []
        for entry in value:
            try:
                kept.append(TrustDecision.model_validate(entry))
            except ValidationError as err:
                log.warning("settings: a trust decision left out (%s): %r", err.errors(include_url=False)[0]["msg"],
                            entry)
        return kept


class Settings(BaseSettings):
    """Everything the user can configure.

    ``Settings(...)`` takes its arguments and the defaults only; :func:`app.settings.model.load_settings` layers the
    file and the environment under them key by key (one bad value falls back to its default instead of failing the
    whole model). The environment is read by pydantic-settings' own source with the configuration below
    (app/settings/environment.py): ``MADOI_<SECTION>_<FIELD>``, split at the first ``_`` after the section's name,
    values taken as written (lists by the fields' own validators: commas, or the path separator for folders).
    """

    model_config = SettingsConfigDict(extra="ignore", validate_assignment=True, env_prefix="MADOI_",
                                      env_nested_delimiter="_", env_nested_max_split=1, enable_decoding=False)

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
    # The file's data as these settings stood when read or last written (SettingsStore.write): a write changes only
    # what differs from it (app/settings/merge.py). Copies (model_copy, as the dialog makes) keep it.
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
        return (init_settings,)


# The ``[section]`` tables and their models: every field of Settings but ``companions`` (``[companions.<id>]``).
SECTIONS: Final[dict[str, type[SettingsSection]]] = {
    name: field.annotation for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, SettingsSection)
}
