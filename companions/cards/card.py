"""Companion Cards (seed 003): who a companion is, what it may do, and how it decides, loaded from YAML or TOML.

Texts a person reads (personality, story, role, instructions ...) may be one string or a table by language
(``{ja: ..., en: ...}``); :func:`localized` picks one. CEL expressions are compiled when the card loads, so an
invalid expression is a load problem, not a surprise in the middle of a conversation. A broken card becomes a
:class:`CardProblem` (file, field, reason) and the other cards still load.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from companions.cards.cel_runtime import cel
from companions.common.untrusted_data import Unreadable, parse_yaml
from companions.tools.mcp_config import McpServer
from companions.wire.protocol import CompanionMetadata

log = logging.getLogger(__name__)

Localized: TypeAlias = str | dict[str, str]
CARD_SUFFIXES: Final = (".yaml", ".yml", ".toml")
MAX_CARD_FILE_BYTES: Final = 16 * 1024 * 1024  # an imported card keeps what it did not use: up to its 8 MB of JSON
BUILTIN_ACTIONS: Final = ("speak", "gesture")
BUILTIN_KNOWLEDGE: Final = ("companions_network", "vision", "search")


def localized(text: Localized, language: str) -> str:
    """The text for ``language``, else English, else the first one given."""
    if isinstance(text, str):
        return text
    return text.get(language) or text.get("en") or next(iter(text.values()), "")


class _Card(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CardMetadata(_Card):
    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    name: Localized
    personality: Localized = ""
    story: Localized = ""
    sample: Localized = ""


class Execute(_Card):
    instruction: Localized
    tool: str | None = None


class Condition(_Card):
    expression: str
    execute: list[Execute] = Field(min_length=1)

    @field_validator("expression")
    @classmethod
    def _compiles(cls, expression: str) -> str:
        try:
            cel.compile(expression)
        except Exception as err:  # the library raises ValueError and friends; all mean "not valid CEL"
            raise ValueError(f"invalid CEL expression {expression!r}: {err}") from None
        return expression


class Events(_Card):
    params: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    conditions: list[Condition] = Field(default_factory=list)

    @field_validator("params")
    @classmethod
    def _object_schema(cls, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("type") != "object" or not isinstance(params.get("properties", {}), dict):
            raise ValueError("params must be a JSON Schema of type 'object' with 'properties'")
        return params


class LLMChoice(_Card):
    """The model this companion uses; anything unset falls back to the app's LLM settings."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)


VoiceEngine: TypeAlias = Literal["openjtalk", "system", "voicevox"]


class Voice(_Card):
    """How this companion sounds: a voice per language, the engine that voices it, and its tuning.

    ``ja``, ``en`` (and any other language code) name a voice: a language (``ja``, ``en-us``), a system voice id,
    either with an espeak variant (``en-us+f3``), ``openjtalk`` (Open JTalk's voice Mei), or ``voicevox:<style id>``
    (a VOICEVOX-compatible engine's voice, when one runs). ``engine`` picks the engine where the voice leaves it open:
    ``openjtalk`` (Japanese lines, the default when it is installed), ``system`` (pyttsx3: espeak-ng, SAPI5,
    NSSpeechSynthesizer) or ``voicevox`` (its first voice; the default voice when no engine answers). ``rate`` is
    words per minute at the settings' 170 (the settings' rate scales it); ``half_tone`` shifts the pitch in
    semitones; ``all_pass`` is Open JTalk's all-pass constant (0.55 is Mei's own: lower sounds smaller and brighter,
    higher larger and darker).
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    ja: str | None = None
    en: str | None = None
    rate: int | None = Field(default=None, ge=50, le=400)
    engine: VoiceEngine | None = None
    half_tone: float | None = Field(default=None, ge=-24, le=24)
    all_pass: float | None = Field(default=None, ge=0.0, le=0.99)

    def for_language(self, language: str) -> str | None:
        """The voice for ``language`` as the ``speak`` query carries it: its name and, when the card tunes it,
        ``;key=value`` pairs (``ja;rate=185;half_tone=2.5;all_pass=0.52``; app/devices/voice_spec.py reads them).
        None when the card names no voice and tunes nothing."""
        return self.tuned(self.name_for(language), engine=True)

    def name_for(self, language: str) -> str | None:
        """The name of the card's voice for ``language`` (what a person picks from), without its tuning: the
        language itself where the card only tunes it; None when it names no voice and tunes nothing."""
        value = getattr(self, language, None) if language in ("ja", "en") else (self.model_extra or {}).get(language)
        if isinstance(value, str):
            return value.replace(";", "")
        return language if self._tuning(engine=True) else None

    def tuned(self, name: str | None, *, engine: bool) -> str | None:
        """``name`` (a voice) with the card's tuning added; ``engine``: its engine too (not for a voice the user
        picked, which says its own engine)."""
        tuning = self._tuning(engine=engine)
        return ";".join([name, *tuning]) if name is not None and tuning else name

    def _tuning(self, *, engine: bool) -> list[str]:
        settings = (("engine", self.engine if engine else None), ("rate", self.rate), ("half_tone", self.half_tone),
                    ("all_pass", self.all_pass))
        return [f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                for key, value in settings if value is not None]


def _installed_plugins(group: str) -> set[str]:
    from importlib.metadata import entry_points

    return {point.name for point in entry_points(group=group)}


def _known(builtin: tuple[str, ...], group: str, kind: str) -> AfterValidator:
    """A name that is built in or an installed plugin (companions/tools/plugins.py) of entry point ``group``."""

    def check(name: str) -> str:
        if name not in builtin and name not in _installed_plugins(group):
            raise ValueError(f"no built-in {kind} or installed plugin ({group}) named {name!r}; "
                             f"built in: {', '.join(builtin)}")
        return name

    return AfterValidator(check)


ActionName: TypeAlias = Annotated[str, _known(BUILTIN_ACTIONS, "madoi.actions", "action")]
KnowledgeName: TypeAlias = Annotated[str, _known(BUILTIN_KNOWLEDGE, "madoi.knowledge", "knowledge")]


class LoreEntry(_Card):
    """One entry of a character's lorebook (an imported card's ``character_book``): what the companion knows,
    and the keywords that bring it up."""

    keys: list[str] = Field(default_factory=list)
    content: str = Field(min_length=1)
    name: str = ""
    enabled: bool = True
    constant: bool = False  # always known, whatever is said (a lorebook's "constant" entry)


class CompanionCard(_Card):
    metadata: CardMetadata
    role: Localized
    greeting: Localized = ""  # the first thing it says to someone new (a character card's first message)
    lore: list[LoreEntry] = Field(default_factory=list)  # what it knows, by keyword (an imported lorebook)
    # What an imported character card holds that Madoi does not use (creator notes, tags, a system prompt ...):
    # kept as it was, shown in the editor and written back on export, never silently dropped.
    unused: dict[str, Any] = Field(default_factory=dict)
    # Built-in names or plugins' entry point names (companions/tools/plugins.py).
    actions: list[ActionName] = Field(default_factory=lambda: ["speak"])
    knowledge: list[KnowledgeName] = Field(default_factory=list)
    mcp: list[McpServer] = Field(default_factory=list)  # MCP servers whose tools this companion may use
    events: Events = Field(default_factory=Events)
    llm: LLMChoice = Field(default_factory=LLMChoice)
    voice: Voice = Field(default_factory=Voice)
    colour: str = Field(default="#7aa2f7", pattern=r"^#[0-9a-fA-F]{6}$")
    avatar: str | None = None

    @field_validator("mcp")
    @classmethod
    def _distinct_servers(cls, servers: list[McpServer]) -> list[McpServer]:
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise ValueError("each MCP server needs a name of its own")
        return servers

    @property
    def id(self) -> str:
        return self.metadata.id

    def name(self, language: str) -> str:
        return localized(self.metadata.name, language)

    def wire_metadata(self, language: str) -> CompanionMetadata:
        m = self.metadata
        return CompanionMetadata(
            id=m.id,
            name=localized(m.name, language),
            personality=localized(m.personality, language),
            story=localized(m.story, language),
            sample=localized(m.sample, language),
        )


@dataclass(frozen=True)
class CardProblem:
    """Why one card file did not load: ``field`` is a dotted path (empty when the whole file is unreadable)."""

    file: Path
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.file.name}: {self.field}" if self.field else self.file.name
        return f"{where}: {self.reason}"


@dataclass
class LoadedCards:
    cards: list[CompanionCard] = field(default_factory=list)
    problems: list[CardProblem] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)  # the file each card was read from, by id

    def by_id(self) -> dict[str, CompanionCard]:
        return {c.id: c for c in self.cards}


def _read(path: Path) -> Any:
    """The file's data, read within bounds (its size, YAML's aliases: companions/common/untrusted_data.py)."""
    size = path.stat().st_size
    if size > MAX_CARD_FILE_BYTES:
        raise Unreadable(f"the file has {size:,} bytes, more than a card may ({MAX_CARD_FILE_BYTES:,})")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text)
        except RecursionError:
            raise Unreadable("the TOML is nested too deeply to read") from None
    return parse_yaml(text)


def load_card(path: Path) -> CompanionCard | list[CardProblem]:
    """Loads one card file: the card, or the problems that stop it from loading."""
    try:
        data = _read(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, Unreadable) as err:
        return [CardProblem(path, "", f"cannot read the file: {err}")]
    if not isinstance(data, dict):
        return [CardProblem(path, "", "a card must be a mapping of fields")]
    try:
        return CompanionCard.model_validate(data)
    except ValidationError as err:
        return [
            CardProblem(path, ".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, "))
            for e in err.errors(include_url=False)
        ]


def card_files(folders: Iterable[Path]) -> Iterator[Path]:
    """Every card file in ``folders``, folder by folder, each folder's by name."""
    for folder in folders:
        if folder.is_dir():
            yield from sorted(p for p in folder.iterdir() if p.suffix in CARD_SUFFIXES and p.is_file())


def card_ids(folders: Iterable[Path]) -> set[str]:
    """The ids of the cards in ``folders`` that load, read one at a time and none kept (a folder may hold
    thousands: an import asks only which ids are taken)."""
    ids: set[str] = set()
    for path in card_files(folders):
        outcome = load_card(path)
        if isinstance(outcome, CompanionCard):
            ids.add(outcome.id)
    return ids


def load_cards(folders: Iterable[Path]) -> LoadedCards:
    """Loads every card in ``folders`` (later folders override earlier ones by id: user cards beat samples)."""
    loaded = LoadedCards()
    by_id: dict[str, CompanionCard] = {}
    for path in card_files(folders):
        outcome = load_card(path)
        if isinstance(outcome, CompanionCard):
            by_id[outcome.id] = outcome
            loaded.files[outcome.id] = path
        else:
            loaded.problems.extend(outcome)
            for problem in outcome:
                log.warning("companion card %s", problem)
    loaded.cards = list(by_id.values())
    return loaded


def sample_cards_dir() -> Path:
    from resources import RESOURCES_DIR

    return RESOURCES_DIR / "companions"
