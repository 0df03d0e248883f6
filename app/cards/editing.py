"""What the window's companion editor asks of the running app (ui/cards/editor.py's ``CompanionEditing`` port):
the cards as they are on disk, saving one (a card file in the user's folder), removing or restoring one, importing
and exporting character cards, approving what a card runs and sends, and each companion's face (picture, colour).

Every change to the card files is taken by the runtime at once (``Runtime.reload_companions``): a new companion
joins the conversation, an edited one speaks with its new card from its next turn. Approvals are settings
(``[[trust.cards]]``): they go through the window's own Save path (``settings_saved``) so the settings dialog and
the runtime see the same settings.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from app.cards.checks import CompanionChecks, ModelCheck
from app.cards.library import CardEntry, CardLibrary
from app.devices.voices import VoiceChoice
from app.runtime.runtime import Runtime
from app.settings.model import Settings
from companions.cards.approval import CardPrivileges, CardTrust, privileges_of
from companions.cards.card import CompanionCard, sample_cards_dir
from companions.cards.character_cards import ImportResult, card_yaml
from companions.common.atomic_write import write_atomically
from companions.common.private_files import PRIVATE_FILE, make_private, private_dir

log = logging.getLogger(__name__)
PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
EDITOR_TOOLS = frozenset({"search"})  # the privileged tools the editor's form lets the user choose (its box)


class RuntimeCompanionEditing:
    """The editor's port onto the running app; ``settings_saved`` is the window's own path for saved settings."""

    def __init__(self, runtime: Runtime, settings_saved: Callable[[Settings], object]) -> None:
        self.runtime = runtime
        self._settings_saved = settings_saved

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def user_dir(self) -> Path:
        return self.runtime.paths.cards_dir

    def voices(self, language: str) -> list[VoiceChoice]:
        """The speech engine's voices for ``language`` (none before the app's speaker started)."""
        return CompanionChecks.for_runtime(self.runtime).voices(language)

    @property
    def can_speak(self) -> bool:
        return CompanionChecks.for_runtime(self.runtime).can_speak

    async def test_model(self, settings: Settings, card: CompanionCard) -> ModelCheck:
        """One short request to ``card``'s model for ``settings``, the way the companion would send it."""
        return await CompanionChecks.for_runtime(self.runtime).test_model(settings, card)

    async def say(self, sentence: str, voice_id: str | None) -> None:
        """Says ``sentence`` in ``voice_id`` through the app's speaker (raises with the reason when it cannot)."""
        await CompanionChecks.for_runtime(self.runtime).say(self.settings.voice, sentence, voice_id)

    def library(self) -> CardLibrary:
        return CardLibrary(self.runtime.loaded)

    def entries(self) -> list[CardEntry]:
        return self.library().entries()[0]

    def faces(self) -> dict[str, tuple[Path | None, str | None]]:
        """Each companion's picture and, for a card the user made or edited, the colour it chose."""
        out: dict[str, tuple[Path | None, str | None]] = {}
        for entry in self.entries():
            colour = entry.card.colour if entry.origin == "user" and "colour" in entry.card.model_fields_set else None
            out[entry.id] = (entry.avatar_path(), colour)
        return out

    def is_sample(self, card_id: str) -> bool:
        return (sample_cards_dir() / f"{card_id}.yaml").exists() or (sample_cards_dir() / f"{card_id}.toml").exists()

    async def save(self, card: CompanionCard, picture: Path | None = None) -> Path:
        """Writes ``card`` as ``<id>.yaml`` in the user's folder (with ``picture`` copied beside it as its avatar),
        then the running app takes it. Returns the card file.

        Raises:
            OSError: the folder cannot be written (nothing is half-written: the old card stays).
        """
        if picture is not None:
            suffix = picture.suffix.lower() if picture.suffix.lower() in PICTURE_SUFFIXES else ".png"
            card = card.model_copy(update={"avatar": f"{card.id}{suffix}"})
        approve = self._written_by_the_user(card)
        file = await asyncio.to_thread(_write_card, self.user_dir, card, picture)
        if approve:
            # Applied here, not only by the window after its Save path: the card is taken next with its tools.
            await self.runtime.apply_settings(await self._approval_saved(card, True))
        await self.runtime.reload_companions()
        return file

    def _written_by_the_user(self, card: CompanionCard) -> bool:
        """Whether saving ``card`` from the editor approves it: the user wrote it, so the tools the form chose
        (the "may search" box; a sample's camera kept) are theirs. Only when the card it replaces was trusted (a
        sample or an approved card) and it runs and sends what that one did (the form never edits commands or
        endpoints), or, for a new card, when it asks for nothing but what the form offers: editing a held
        imported card's words, or duplicating it, approves nothing it asked for."""
        before = next((e for e in self.entries() if e.id == card.id), None)
        asks = privileges_of(card)
        if asks.empty:
            return False
        if before is None:
            return asks.reach == CardPrivileges(card.id).reach and set(asks.tools) <= EDITOR_TOOLS
        return before.trusted and asks.reach == before.privileges.reach

    async def reload(self) -> None:
        """Takes the card files as they are now (a card copied into the folder, or changed by hand)."""
        await self.runtime.reload_companions()

    async def remove(self, card_id: str) -> None:
        """Removes the user's card ``card_id`` (a sample comes back as shipped) and its picture."""
        for suffix in (".yaml", ".yml", ".toml", *PICTURE_SUFFIXES):
            (self.user_dir / f"{card_id}{suffix}").unlink(missing_ok=True)
        await self.runtime.reload_companions()

    async def import_file(self, source: Path, card_id: str | None = None) -> ImportResult:
        result = await asyncio.to_thread(self.library().import_file, source, card_id)
        await self.runtime.reload_companions()
        return result

    async def export_file(self, card_id: str, target: Path) -> Path:
        return await asyncio.to_thread(self.library().export_file, card_id, target, self.settings.general.language)

    async def set_approved(self, card: CompanionCard, approved: bool) -> None:
        """Approves (or revokes) what ``card`` runs, sends and uses, saved in the settings and applied at once."""
        await self._approval_saved(card, approved)

    async def _approval_saved(self, card: CompanionCard, approved: bool) -> Settings:
        """The settings with ``card`` approved (or revoked), saved through the window's path."""
        trust = CardTrust.of([sample_cards_dir()], self.settings.trust.cards)
        if approved:
            trust.approve(card)
        else:
            trust.revoke(card.id)
        settings = self.settings.model_copy(
            update={"trust": self.settings.trust.model_copy(update={"cards": trust.approvals})})
        await self.save_settings(settings)
        return settings

    async def save_settings(self, settings: Settings) -> None:
        """Writes ``settings`` and hands them to the window's Save path (the runtime applies them)."""
        await self.runtime.loaded.save(settings)
        self._settings_saved(settings)


def _write_card(folder: Path, card: CompanionCard, picture: Path | None) -> Path:
    """``<id>.yaml`` (and its picture, copied first) in ``folder``; the only card file of that id there."""
    if picture is not None and card.avatar is not None and picture.resolve() != (folder / card.avatar).resolve():
        private_dir(folder)
        _copy_atomically(picture, folder / card.avatar)
    file = folder / f"{card.id}.yaml"
    write_atomically(file, card_yaml(card))  # 0600, in a folder made 0700 if missing: Madoi's files are private
    for other in (".yml", ".toml"):
        (folder / f"{card.id}{other}").unlink(missing_ok=True)
    return file


def _copy_atomically(source: Path, target: Path) -> None:
    partial = target.with_name(f".{target.name}.copying")
    shutil.copyfile(source, partial)
    make_private(partial, PRIVATE_FILE)
    partial.replace(target)
