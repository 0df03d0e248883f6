"""The companion card files on disk: which there are, where they come from, whether they are trusted; approving.

The sample cards ship in ``resources/companions`` (trusted, never written); the user's own cards (hand-written,
made in the editor, imported) live in the config directory's ``companions/`` folder, and a card there with the id
of a sample replaces that sample. :class:`CardLibrary` is what the ``madoi companions`` commands and the window's
editor work on; the runtime takes the files again when they change (app/cards/cast_changes.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.settings.model import SettingsStore
from companions.cards.approval import CardApproval, CardPrivileges, CardTrust, privileges_of
from companions.cards.card import CardProblem, CompanionCard, card_ids, load_cards, sample_cards_dir
from companions.cards.character_cards import (
    CHARACTER_SUFFIXES,
    CardImportError,
    ImportResult,
    export_json,
    export_png,
    import_character,
)
from companions.common.atomic_write import write_atomically


@dataclass(frozen=True)
class CardEntry:
    """One companion card as the user sees it in a list."""

    card: CompanionCard
    file: Path
    origin: str  # "sample" or "user"
    trusted: bool
    privileges: CardPrivileges

    @property
    def id(self) -> str:
        return self.card.id

    def avatar_path(self) -> Path | None:
        """The card's picture (a path relative to the card's folder, or absolute), when it exists."""
        if not self.card.avatar:
            return None
        path = Path(self.card.avatar).expanduser()
        path = path if path.is_absolute() else self.file.parent / path
        return path if path.is_file() else None

    def as_json(self, language: str) -> dict[str, Any]:
        avatar = self.avatar_path()
        return {"id": self.id, "name": self.card.name(language), "file": str(self.file), "origin": self.origin,
                "avatar": str(avatar) if avatar is not None else None, "trusted": self.trusted,
                "asks": self.privileges.lines()}


class CardLibrary:
    """The sample and user card folders of ``loaded``'s paths, with the user's approvals of its settings."""

    def __init__(self, loaded: SettingsStore) -> None:
        self.loaded = loaded
        self.samples = sample_cards_dir()
        self.user_dir = loaded.paths.cards_dir

    @property
    def folders(self) -> list[Path]:
        return [self.samples, self.user_dir]

    def trust(self) -> CardTrust:
        return CardTrust.of([self.samples], self.loaded.settings.trust.cards)

    def entries(self) -> tuple[list[CardEntry], list[CardProblem]]:
        """Every card that loads (a user card replaces the sample of its id), and the problems of those that do not."""
        loaded = load_cards(self.folders)
        trust = self.trust()
        entries = [CardEntry(card, loaded.files[card.id], trust.origin(loaded.files[card.id]),
                             trust.trusted(card, loaded.files[card.id]), privileges_of(card))
                   for card in loaded.cards]
        return entries, loaded.problems

    def entry(self, card_id: str) -> CardEntry | None:
        return next((e for e in self.entries()[0] if e.id == card_id), None)

    def import_file(self, source: Path, card_id: str | None = None) -> ImportResult:
        """Imports a character card (PNG or JSON) into the user's folder.

        Raises:
            CardImportError: why it cannot be imported (its id is taken, the file is damaged ...).
        """
        return import_character(source, self.user_dir, existing=card_ids(self.folders), card_id=card_id,
                                user_name=self.loaded.settings.general.user_name)

    def import_folder(self, folder: Path) -> Iterator[tuple[Path, ImportResult | CardImportError]]:
        """Imports every character card (``.png``, ``.json``) in ``folder``, one at a time: each file with what
        came of it (the reason, for one that was not imported). Only ids are kept between files, so a folder of
        thousands of cards imports in the memory of one."""
        taken = card_ids(self.folders)
        sources = sorted(p for p in folder.iterdir() if p.suffix.lower() in CHARACTER_SUFFIXES and p.is_file())
        for source in sources:
            try:
                result = import_character(source, self.user_dir, existing=taken,
                                          user_name=self.loaded.settings.general.user_name)
            except CardImportError as err:
                yield source, err
                continue
            taken.add(result.card.id)
            yield source, result

    def export_file(self, card_id: str, target: Path, language: str | None = None) -> Path:
        """Writes companion ``card_id`` as a V3 character card: PNG (with its picture) or, for ``.json``, JSON.

        Raises:
            KeyError: no card has that id.
            OSError: ``target`` cannot be written.
        """
        entry = self.entry(card_id)
        if entry is None:
            raise KeyError(card_id)
        language = language or self.loaded.settings.general.language
        if target.suffix.lower() == ".json":
            write_atomically(target, export_json(entry.card, language), mode=0o644)
        else:
            avatar = entry.avatar_path()
            picture = avatar.read_bytes() if avatar is not None and avatar.suffix.lower() == ".png" else None
            write_atomically(target, export_png(entry.card, picture, language), mode=0o644)
        return target

    def approve(self, card_id: str) -> CardApproval:
        """Approves what card ``card_id`` runs and sends as it is now, and saves it in the settings' ``[trust]``.

        Raises:
            KeyError: no card has that id.
        """
        entry = self.entry(card_id)
        if entry is None:
            raise KeyError(card_id)
        trust = self.trust()
        approval = trust.approve(entry.card)
        self._save_approvals(trust.approvals)
        return approval

    def revoke(self, card_id: str) -> bool:
        """Forgets the approval of card ``card_id``; False when there was none."""
        trust = self.trust()
        before = len(trust.approvals)
        trust.revoke(card_id)
        if len(trust.approvals) == before:
            return False
        self._save_approvals(trust.approvals)
        return True

    def _save_approvals(self, approvals: list[CardApproval]) -> None:
        settings = self.loaded.settings
        trust = settings.trust.model_copy(update={"cards": approvals})
        self.loaded.settings = settings.model_copy(update={"trust": trust})
        self.loaded.write()
