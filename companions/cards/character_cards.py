"""Character cards (SillyTavern's V2 ``chara_card_v2`` and V3 ``chara_card_v3``, as PNG or JSON) in and out of
Madoi's companion cards.

Reading: a PNG carries the card as base64 JSON in a text chunk (``ccv3`` for V3, preferred; ``chara`` for V2 or
V1); a ``.json`` file is the card itself. Everything is validated at this boundary (:class:`TavernCard`) and every
failure is a :class:`CardImportError` whose message says what is wrong with the file.

How a character maps onto a companion (:func:`companion_from_character`):

============================ ===================================================================================
character card               Madoi card
============================ ===================================================================================
name (nickname)              ``metadata.name``; the id is derived from it (ASCII, romaji for Japanese), stable
description, scenario        ``metadata.story`` (the character's background and situation)
personality                  ``metadata.personality``
first_mes                    ``greeting``, and the first of the sample lines
alternate_greetings,         ``metadata.sample``: the greetings and {{char}}'s lines of the example dialogue, a
mes_example                  few of them (how it talks; the length of its lines follows them)
character_book               ``lore``: each entry's keywords and content
the picture                  the avatar (the PNG without its text chunks, beside the card)
extensions.madoi             a card exported by Madoi: role, colour, voice, actions, events ... as they were
everything else              ``unused``: kept in the card as it was, shown in the editor, exported again
============================ ===================================================================================

``{{char}}`` and ``{{user}}`` (any case) are replaced by the character's name and the user's name ("you" / "あなた"
while the user keeps the default name ``user``). The texts are
kept under the language they are written in (Japanese when they hold kana or kanji, else English). A card made
this way is a user card: what it would run or send is held until the user approves it (companions/cards/approval.py).

Writing (:func:`character_from_companion`, :func:`export_png`, :func:`export_json`): a V3 card in the companion's
language, with the Madoi card whole under ``extensions.madoi`` and the unused fields restored; the PNG carries both
``ccv3`` and, for older readers, ``chara`` (the same data as V2).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from companions.cards.card import CompanionCard, LoreEntry, localized
from companions.cards.png_text import PngError, read_texts, solid_png, with_texts, without_texts
from companions.common import morphology
from companions.common.atomic_write import write_atomically
from companions.common.languages import Language
from companions.common.private_files import private_dir
from companions.common.untrusted_data import Unreadable, parse_json

CHARACTER_SUFFIXES: Final = (".png", ".json")  # the files a folder import takes
MAX_CARD_FILE_BYTES: Final = 64 * 1024 * 1024  # a card picture of 20 MB imports; a file above this is refused
MAX_JSON_BYTES: Final = 8 * 1024 * 1024  # the card's JSON once decoded
SAMPLE_LINES: Final = 4
MAX_DEPTH: Final = 32  # real cards nest 5-6 levels (data, character_book, entries, extensions ...)
TEXT_LIMITS: Final = {"personality": 2000, "story": 8000, "sample": 1200, "greeting": 1000, "lore": 2000}
MAX_LORE_ENTRIES: Final = 200
_PLACEHOLDER: Final = re.compile(r"\{\{\s*(char|user)\s*\}\}", re.IGNORECASE)
_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_ID: Final = re.compile(r"[^a-z0-9]+")
ROLE: Final = {
    "ja": "{name}として、キャラクターのまま会話に加わる。",
    "en": "Take part in the conversation as {name}, staying in character.",
}


class CardImportError(ValueError):
    """A character card that cannot be imported; the message says why, for the user."""


class IdTaken(CardImportError):
    """The card's id belongs to a companion already (``card_id``); it can come in under another id."""

    def __init__(self, card_id: str) -> None:
        super().__init__(f"a companion with the id {card_id!r} exists already: import it under another id "
                         "(--id, or another name in the editor)")
        self.card_id = card_id


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class TavernBookEntry(_Lenient):
    keys: list[str] = Field(default_factory=list)
    content: str = ""
    name: str = ""
    comment: str = ""
    enabled: bool = True
    constant: bool = False


class TavernBook(_Lenient):
    name: str = ""
    entries: list[TavernBookEntry] = Field(default_factory=list)


class TavernData(_Lenient):
    """The fields of a V2/V3 card's ``data`` (a V1 card has them at the top level)."""

    name: str = Field(min_length=1, max_length=200)
    nickname: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    character_book: TavernBook | None = None
    extensions: dict[str, Any] = Field(default_factory=dict)


USED: Final = frozenset({"name", "nickname", "description", "personality", "scenario", "first_mes", "mes_example",
                         "alternate_greetings", "character_book", "extensions"})


class TavernCard(BaseModel):
    """A whole character card: its spec and its data."""

    model_config = ConfigDict(extra="allow")

    spec: Literal["chara_card_v2", "chara_card_v3"] | None = None
    spec_version: str = ""
    data: TavernData


@dataclass(frozen=True)
class ImportedCharacter:
    """A character card read from a file: the card, its picture (PNG without text chunks) and its format."""

    card: TavernCard
    picture: bytes | None
    format: str  # "V3 PNG", "V2 JSON" ...


def _decode_chunk(keyword: str, text: str) -> Any:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise CardImportError(f"its {keyword!r} text is not valid base64: the card is damaged") from None
    if len(raw) > MAX_JSON_BYTES:
        raise CardImportError(f"its card data is larger than {MAX_JSON_BYTES // 1_048_576} MB")
    try:
        return parse_json(raw, max_depth=MAX_DEPTH)
    except Unreadable as err:
        raise CardImportError(f"its {keyword!r} text is not a JSON card Madoi can keep: {err}") from None


def _validated(raw: Any) -> TavernCard:
    if not isinstance(raw, dict):
        raise CardImportError("it holds no character card (the JSON is not an object)")
    if "data" not in raw:  # V1: the fields at the top level
        raw = {"spec": None, "data": raw}
    elif raw.get("spec") not in ("chara_card_v2", "chara_card_v3", None):
        raise CardImportError(f"its spec {raw.get('spec')!r} is not a character card Madoi knows "
                              "(chara_card_v2 or chara_card_v3)")
    try:
        return TavernCard.model_validate(raw)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CardImportError(f"the card's {where} is not valid: {first['msg']}") from None


def read_character(data: bytes, name: str) -> ImportedCharacter:
    """The character card in ``data`` (a file called ``name``: PNG, or JSON).

    Raises:
        CardImportError: what is wrong, in words for the user.
    """
    if len(data) > MAX_CARD_FILE_BYTES:
        raise CardImportError(f"the file is larger than {MAX_CARD_FILE_BYTES // 1_048_576} MB")
    if data.startswith(b"\x89PNG"):
        try:
            texts = read_texts(data)
            picture = without_texts(data)
        except PngError as err:
            raise CardImportError(str(err)) from None
        keyword = "ccv3" if "ccv3" in texts else "chara" if "chara" in texts else None
        if keyword is None:
            raise CardImportError("the picture carries no character card (no 'chara' or 'ccv3' text)")
        card = _validated(_decode_chunk(keyword, texts[keyword]))
        return ImportedCharacter(card, picture, f"{_version(card)} PNG")
    try:
        raw = parse_json(data.decode("utf-8-sig"), max_depth=MAX_DEPTH)
    except UnicodeDecodeError as err:
        raise CardImportError(f"{name} is neither a PNG character card nor a JSON one ({err})") from None
    except Unreadable as err:
        raise CardImportError(f"{name} is neither a PNG character card nor a JSON one Madoi can keep: {err}") from None
    card = _validated(raw)
    return ImportedCharacter(card, None, f"{_version(card)} JSON")


def _version(card: TavernCard) -> str:
    return {"chara_card_v3": "V3", "chara_card_v2": "V2"}.get(card.spec or "", "V1")


def language_of(*texts: str) -> Language:
    return "ja" if any(_JAPANESE.search(t) for t in texts) else "en"


def derive_id(name: str) -> str:
    """A stable id from a name: ASCII letters and digits (Japanese as romaji), words joined by ``-``."""
    text = unicodedata.normalize("NFKC", name)
    if _JAPANESE.search(text):
        text = morphology.romaji(text)
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _ID.sub("-", ascii_text.lower()).strip("-")[:48].strip("-")
    return slug or "companion"


USER_WORD: Final = {"ja": "あなた", "en": "you"}  # {{user}} when the user kept the default name "user"


def _resolve(text: str, name: str, user: str) -> str:
    return _PLACEHOLDER.sub(lambda m: name if m.group(1).lower() == "char" else user, text).strip()


def _example_lines(examples: str) -> list[str]:
    """{{char}}'s lines in an example dialogue (``<START>`` blocks of ``{{char}}: ...`` / ``{{user}}: ...``)."""
    lines = []
    for line in examples.splitlines():
        head, sep, said = line.partition(":")
        speaker = head.strip()
        if sep and said.strip() and _PLACEHOLDER.fullmatch(speaker) and speaker.lower().strip("{} ") == "char":
            lines.append(said.strip())
    return lines


def _unused(data: TavernData, card: TavernCard) -> dict[str, Any]:
    """What the card holds that the mapping does not use (empty values left out)."""
    kept: dict[str, Any] = {}
    for key, value in (data.model_extra or {}).items():
        if value not in ("", [], {}, None):
            kept[key] = value
    extensions = {k: v for k, v in data.extensions.items() if k != "madoi"}
    if extensions:
        kept["extensions"] = extensions
    if data.character_book is not None:
        book = {k: v for k, v in (data.character_book.model_extra or {}).items() if v not in ("", [], {}, None)}
        if data.character_book.name:
            book["name"] = data.character_book.name
        entries = [{k: v for k, v in (e.model_extra or {}).items() if v not in ("", [], {}, None)}
                   for e in data.character_book.entries if e.content.strip()]
        if any(entries):  # each entry's fields Madoi does not use (order, position, secondary keys ...)
            book["entries"] = entries
        if book:
            kept["character_book"] = book
    for key, value in (card.model_extra or {}).items():
        kept.setdefault(f"card.{key}", value)
    return kept


def companion_from_character(imported: TavernCard, *, card_id: str, user_name: str = "user",
                             avatar: str | None = None) -> CompanionCard:
    """The Madoi card of a character card (see the module's table)."""
    data = imported.data
    name = (data.nickname or data.name).strip()
    language = language_of(data.name, data.description, data.personality, data.first_mes)
    user = USER_WORD[language] if user_name == "user" else user_name

    def resolved(text: str) -> str:
        return _resolve(text, name, user)

    def here(text: str) -> dict[str, str] | str:
        return {language: text} if text else ""

    cut: dict[str, Any] = {}  # text beyond what a prompt can carry: kept whole in ``unused``, never dropped

    def capped(text: str, kind: str) -> str:
        limit = TEXT_LIMITS[kind]
        if len(text) <= limit:
            return text
        cut[kind] = text
        return text[:limit]

    story = capped("\n\n".join(t for t in (resolved(data.description), resolved(data.scenario)) if t), "story")
    greetings = [resolved(g) for g in (data.first_mes, *data.alternate_greetings) if g.strip()]
    samples = (greetings[:2] + [resolved(x) for x in _example_lines(data.mes_example)])[:SAMPLE_LINES]
    book = data.character_book.entries if data.character_book is not None else []
    lore = [LoreEntry(keys=[k for k in e.keys if k.strip()], content=resolved(e.content)[:TEXT_LIMITS["lore"]],
                      name=e.name or e.comment, enabled=e.enabled, constant=e.constant)
            for e in book[:MAX_LORE_ENTRIES] if e.content.strip()]
    if len(book) > MAX_LORE_ENTRIES:
        cut["lore"] = [e.model_dump() for e in book[MAX_LORE_ENTRIES:]]
    fields: dict[str, Any] = {}
    madoi = data.extensions.get("madoi")
    if isinstance(madoi, dict):  # a card Madoi exported: its own fields back as they were
        fields = {k: v for k, v in madoi.items() if k in ("role", "actions", "knowledge", "mcp", "events", "llm",
                                                           "voice", "colour", "metadata")}
    metadata: dict[str, Any] = {"name": here(name) or name,
                                "personality": here(capped(resolved(data.personality), "personality")),
                                "story": here(story), "sample": here(capped("\n".join(samples), "sample"))}
    exported = fields.pop("metadata", None)
    if isinstance(exported, dict):  # the texts in every language they were written in
        metadata = {k: v for k, v in exported.items() if k != "id"}
    card = {"role": {language: ROLE[language].format(name=name)}, **fields,
            "metadata": {**metadata, "id": card_id},
            "greeting": here(capped(greetings[0], "greeting")) if greetings else "",
            "lore": [e.model_dump() for e in lore],
            "unused": _unused(data, imported) | ({"cut": cut} if cut else {})}
    if avatar is not None:
        card["avatar"] = avatar
    try:
        return CompanionCard.model_validate(card)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        raise CardImportError(f"the card's {'.'.join(str(p) for p in first['loc'])} cannot be used: "
                              f"{first['msg']}") from None


def card_yaml(card: CompanionCard) -> str:
    """The card as the YAML file Madoi keeps (what the user could have written by hand)."""
    data = card.model_dump(mode="json", exclude_defaults=True)
    data["metadata"] = card.metadata.model_dump(mode="json", exclude_defaults=True)
    data["role"] = card.role
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)


@dataclass(frozen=True)
class ImportResult:
    card: CompanionCard
    file: Path
    avatar: Path | None
    format: str
    unused: tuple[str, ...]  # the fields kept but not used


def import_character(source: Path, folder: Path, *, existing: Collection[str], card_id: str | None = None,
                     user_name: str = "user") -> ImportResult:
    """Reads the character card ``source`` and writes it into ``folder`` as ``<id>.yaml`` (and ``<id>.png``, its
    picture). Nothing is written unless everything can be: a failure leaves ``folder`` as it was.

    Raises:
        CardImportError: the file cannot be read or is not a card, or its id is taken (``existing`` ids, or a
            card file of that name in ``folder``): the message says which and how to choose another id.
    """
    try:
        if source.stat().st_size > MAX_CARD_FILE_BYTES:
            raise CardImportError(f"{source.name} is larger than {MAX_CARD_FILE_BYTES // 1_048_576} MB")
        data = source.read_bytes()
    except OSError as err:
        raise CardImportError(f"{source} cannot be read ({err.strerror or err})") from None
    imported = read_character(data, source.name)
    chosen = card_id if card_id is not None else derive_id(imported.card.data.nickname or imported.card.data.name)
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", chosen):
        raise CardImportError(f"{chosen!r} cannot be an id: use letters, digits, '-', '_' or '.'")
    taken = chosen in existing or any((folder / f"{chosen}{s}").exists() for s in (".yaml", ".yml", ".toml"))
    if taken:
        raise IdTaken(chosen)
    avatar = folder / f"{chosen}.png" if imported.picture is not None else None
    card = companion_from_character(imported.card, card_id=chosen, user_name=user_name,
                                    avatar=avatar.name if avatar is not None else None)
    file = folder / f"{chosen}.yaml"
    try:
        private_dir(folder)  # the user's cards say who they talk to: readable by the user only, like all of Madoi's
        if avatar is not None and imported.picture is not None:
            write_atomically(avatar, imported.picture)
        write_atomically(file, card_yaml(card))
    except OSError as err:
        if avatar is not None:
            avatar.unlink(missing_ok=True)
        raise CardImportError(f"the card cannot be written to {folder} ({err.strerror or err})") from None
    return ImportResult(card, file, avatar, imported.format, tuple(card.unused))


# --- export ------------------------------------------------------------------------------------------------


def character_from_companion(card: CompanionCard, language: str) -> dict[str, Any]:
    """A V3 character card of ``card`` in ``language`` (the Madoi card whole under ``extensions.madoi``)."""
    m = card.metadata
    unused = dict(card.unused)
    extensions = dict(unused.pop("extensions", {}) or {})
    book_extra = unused.pop("character_book", {}) or {}
    top = {k.removeprefix("card."): unused.pop(k) for k in list(unused) if k.startswith("card.")}
    samples = [line for line in localized(m.sample, language).splitlines() if line.strip()]
    greeting = localized(card.greeting, language)
    data: dict[str, Any] = {
        **unused,
        "name": localized(m.name, language),
        "description": localized(m.story, language),
        "personality": localized(m.personality, language),
        "scenario": "",
        "first_mes": greeting,
        "mes_example": "".join(f"<START>\n{{{{char}}}}: {line}\n" for line in samples if line != greeting),
        "alternate_greetings": [],
        "extensions": {**extensions, "madoi": card.model_dump(mode="json", exclude={"unused"})},
    }
    if card.lore or book_extra:
        extras = list(book_extra.pop("entries", []))
        extras += [{}] * (len(card.lore) - len(extras))
        data["character_book"] = {"name": "", "extensions": {}, **book_extra, "entries": [
            {"insertion_order": i, "id": i, "use_regex": False, "extensions": {}, **extra,
             "keys": e.keys, "content": e.content, "name": e.name, "enabled": e.enabled, "constant": e.constant}
            for i, (e, extra) in enumerate(zip(card.lore, extras, strict=False))]}
    for key, default in (("creator_notes", ""), ("system_prompt", ""), ("post_history_instructions", ""),
                         ("tags", []), ("creator", ""), ("character_version", ""), ("group_only_greetings", [])):
        data.setdefault(key, default)
    return {**top, "spec": "chara_card_v3", "spec_version": "3.0", "data": data}


def _v2(v3: dict[str, Any]) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": v3["data"]}


def _b64(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")


def export_png(card: CompanionCard, picture: bytes | None, language: str) -> bytes:
    """A PNG character card: ``picture`` (else a square of the companion's colour) with ``ccv3`` and ``chara``."""
    v3 = character_from_companion(card, language)
    base = picture if picture is not None else solid_png(card.colour)
    try:
        return with_texts(base, {"chara": _b64(_v2(v3)), "ccv3": _b64(v3)})
    except PngError:  # an avatar that is not a usable PNG: the card still exports, on a plain square
        return with_texts(solid_png(card.colour), {"chara": _b64(_v2(v3)), "ccv3": _b64(v3)})


def export_json(card: CompanionCard, language: str) -> str:
    return json.dumps(character_from_companion(card, language), ensure_ascii=False, indent=1) + "\n"
