"""The companion editor: add, edit, duplicate and remove companions, import character cards and export them, and
approve what a card runs or sends, in one window (the Madoi menu's "Companions…", or a roster row's "Edit…").

The list shows every companion with its picture (ui/cards/companion_list.py); the form edits the selected one, a
part for each thing it edits: its name (the id is derived from it while the companion is new, and stays) and its
words in the language chosen (personality, story, sample lines, first greeting: ui/cards/identity.py), its colour
and picture (ui/cards/looks.py), its model and voice (the settings' ``[companions.<id>]``: ui/cards/model_choice.py,
ui/cards/voice_choice.py), and its events, whose CEL expressions are checked as they are typed (ui/cards/events.py).
Save writes the card file into the user's folder and the running app takes it at once (app/cards/editing.py); a
sample companion that was edited can be restored as shipped. What a card would run or send (its MCP commands, its
endpoint and key variable) is shown exactly, with Approve and Revoke, and what an imported card holds that Madoi does
not use is listed, kept in the file (ui/cards/card_trust.py). Cards come in and go out as files
(ui/cards/card_files.py), or dropped on the editor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.cards.checks import ModelCheck
from app.cards.library import CardEntry
from app.devices.voices import VoiceChoice
from app.settings.model import CompanionSettings, Settings
from companions.cards.card import CompanionCard
from companions.cards.character_cards import ROLE, ImportResult
from companions.common.languages import Language
from companions.common.tasks import TaskSet
from ui.cards.card_files import CardFiles
from ui.cards.card_trust import CardTrust
from ui.cards.companion_list import CompanionList
from ui.cards.editor_texts import TEXTS, editor_button
from ui.cards.events import CardEvents
from ui.cards.identity import CardIdentity
from ui.cards.looks import CardLooks
from ui.cards.model_choice import ModelChoice
from ui.cards.voice_choice import CardVoice
from ui.roster.faces import FACES, Face
from ui.settings.texts import text
from ui.window.i18n import window_language
from ui.window.naming import named


class CompanionEditing(Protocol):
    """What the editor asks of the app (:class:`app.cards.editing.RuntimeCompanionEditing`)."""

    @property
    def settings(self) -> Settings: ...

    def entries(self) -> list[CardEntry]: ...

    def faces(self) -> dict[str, tuple[Path | None, str | None]]: ...

    def voices(self, language: str) -> list[VoiceChoice]: ...

    def is_sample(self, card_id: str) -> bool: ...

    @property
    def user_dir(self) -> Path: ...

    async def reload(self) -> None: ...

    @property
    def can_speak(self) -> bool: ...

    async def test_model(self, settings: Settings, card: CompanionCard) -> ModelCheck: ...

    async def say(self, sentence: str, voice_id: str | None) -> None: ...

    async def save(self, card: CompanionCard, picture: Path | None = None) -> Path: ...

    async def remove(self, card_id: str) -> None: ...

    async def import_file(self, source: Path, card_id: str | None = None) -> ImportResult: ...

    async def export_file(self, card_id: str, target: Path) -> Path: ...

    async def set_approved(self, card: CompanionCard, approved: bool) -> None: ...

    async def save_settings(self, settings: Settings) -> None: ...


def sync_faces(editing: CompanionEditing) -> bool:
    """The window's faces from the cards now (ui/roster/faces.py); True when any changed."""
    return FACES.update({i: Face(p, c) for i, (p, c) in editing.faces().items()})


class CompanionEditor(QDialog):
    """The editor's window: the list and the card files on the left, the form's parts on the right, the note and
    Restore sample, Save and Close under them."""

    saved = Signal(str)  # the id of the companion whose card was written
    note_changed = Signal(str)

    def __init__(self, editing: CompanionEditing, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "companionEditor")
        self.editing = editing
        # Data, not only the words shown: the language of the card's texts the form edits (a card keeps each text
        # in several), the window's when the editor opened.
        self.language = window_language()
        self.setWindowTitle(self.t("title"))
        self.setAcceptDrops(True)
        self.resize(900, 680)
        self._tasks = TaskSet("companion-editor")
        self._entries: dict[str, CardEntry] = {}
        self._card: CompanionCard | None = None  # the card being edited (None: a new one)
        self._template: CompanionCard | None = None  # a new one's words and tools (a duplicate's original)

        self.companions = CompanionList(self.language)
        self.list = self.companions.list  # (the screenshot scripts pick a row)
        self.files = CardFiles(editing, self.language)
        self.identity = CardIdentity(self.language)
        self.looks = CardLooks(self.language, self._avatar_of)
        self.model_choice = ModelChoice(self.ui_language)
        self.voice_choice = CardVoice(self.ui_language, can_speak=editing.can_speak)
        self.may_search = named(QCheckBox(self.t("may_search")), "maySearchCheck")
        self.may_search.setToolTip(self.t("may_search.tip"))
        self.events = CardEvents(self.language)
        self.trust = CardTrust(self.language)
        self.note = named(QLabel(), "editorNote")
        self.note.setWordWrap(True)
        self.restore_button = editor_button("restore", self.language)
        self.save_button = editor_button("save", self.language)
        self.close_button = editor_button("close", self.language)
        self._lay_out()
        self._connect()
        self.refresh()

    def _lay_out(self) -> None:
        left = QVBoxLayout()
        left.addWidget(self.companions, 1)
        left.addWidget(self.files)
        knowledge = QWidget()
        knowledge_form = QFormLayout(knowledge)
        knowledge_form.setContentsMargins(0, 0, 0, 0)
        knowledge_form.addRow(self.t("knowledge"), self.may_search)
        form_host = QWidget()
        form = QVBoxLayout(form_host)
        for part in (self.identity, self.looks, self.model_choice, self.voice_choice, knowledge, self.events,
                     self.trust):
            form.addWidget(part)
        align_labels(self.identity.form, self.looks.form, self.model_choice.form, self.voice_choice.form,
                     knowledge_form)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the form follows the width
        scroll.setWidget(form_host)
        bottom = QHBoxLayout()
        bottom.addWidget(self.note, 1)
        for button in (self.restore_button, self.save_button, self.close_button):
            bottom.addWidget(button)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(scroll, 3)
        outer = QVBoxLayout(self)
        outer.addLayout(body, 1)
        outer.addLayout(bottom)

    def _connect(self) -> None:
        self.list.currentItemChanged.connect(self._selected)
        self.companions.add_button.clicked.connect(self.add_companion)
        self.companions.duplicate_button.clicked.connect(self.duplicate)
        self.companions.remove_button.clicked.connect(self._remove_clicked)
        self.files.import_chosen.connect(self._import_chosen)
        self.files.export_chosen.connect(self._export_chosen)
        self.files.said.connect(self._said)
        self.identity.changed.connect(self._validate)
        self.events.changed.connect(self._validate)
        self.trust.approve_button.clicked.connect(self._approve_clicked)
        self.trust.revoke_button.clicked.connect(self._revoke_clicked)
        self.model_choice.test_button.clicked.connect(self._test_model_clicked)
        self.voice_choice.test_button.clicked.connect(self._test_voice_clicked)
        self.restore_button.clicked.connect(self._restore_clicked)
        self.save_button.clicked.connect(self._save_clicked)
        self.close_button.clicked.connect(self.close)

    # -- helpers -------------------------------------------------------------------------------------------------
    def t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return self._tasks.spawn(coro, name="companion-editor")

    def say(self, text: str, *, error: bool = False) -> None:
        self.note.setText(text)
        self.note.setProperty("result", "error" if error else "ok")
        self.note_changed.emit(text)

    def _said(self, text: str, error: bool) -> None:
        self.say(text, error=error)

    @property
    def ui_language(self) -> Language:
        return "ja" if self.language == "ja" else "en"

    @property
    def current_id(self) -> str | None:
        return self.companions.current_id

    @property
    def editing_language(self) -> str:
        return self.identity.editing_language

    def _avatar_of(self) -> tuple[str, str]:
        """The id and the name the letter circle is drawn for, as the form has them now."""
        card = self._card
        name = self.identity.name.text().strip() or "?"
        return (card.id if card is not None else self.identity.card_id.text() or "new"), name

    # -- the list ------------------------------------------------------------------------------------------------
    def refresh(self, select: str | None = None, *, keep_form: bool = False) -> None:
        """Lists the companions again from their cards (after a save, an import, a removal). ``keep_form``: a
        change made elsewhere (the folder, an approval) leaves what is being typed alone, unless the companion
        shown is gone."""
        sync_faces(self.editing)
        keep = select or self.current_id
        editing_new = self._card is None  # a new companion (or a duplicate) being written
        self._entries = {e.id: e for e in self.editing.entries()}
        self.companions.fill(self._entries.values())
        ids = list(self._entries)
        if keep_form and (editing_new or keep in ids):
            if keep in ids and not editing_new:
                self.companions.mark_current(ids.index(keep))
                self.trust.show_trust(self._entries[keep])  # approved or revoked meanwhile
            return
        row = ids.index(keep) if keep in ids else 0
        if ids:
            self.list.setCurrentRow(row)
            self._selected()

    def _selected(self, *_: object) -> None:
        entry = self._entries.get(self.current_id or "")
        if entry is not None:
            self._show(entry.card, entry)

    # -- the form ------------------------------------------------------------------------------------------------
    def _show(self, card: CompanionCard | None, entry: CardEntry | None) -> None:
        """Fills the form with ``card`` (None: a new companion)."""
        self._card, self._template = card, None
        self.identity.show_card(card)
        self.looks.show_card(card)
        chosen = self.editing.settings.companion(card.id) if card is not None else CompanionSettings()
        self.model_choice.show_model(chosen.model)
        self.voice_choice.show_voices(card.voice.name_for(self.language) if card is not None else None,
                                      self.editing.voices(self.language),
                                      chosen.voice.get(self.language, ""))  # type: ignore[call-overload]
        self.may_search.setChecked(card is not None and "search" in card.knowledge)
        self.events.show_card(card, self.editing_language)
        self.trust.show_trust(entry)
        self.trust.show_kept(card)
        sample = entry is not None and entry.origin == "sample"
        self.restore_button.setVisible(entry is not None and entry.origin == "user"
                                       and self.editing.is_sample(entry.id))
        self.companions.show_actions(card=card is not None, removable=entry is not None and not sample
                                     and not self.editing.is_sample(entry.id))
        self.files.show_companion(entry.id if entry is not None else None)
        self._validate()

    def _validate(self) -> bool:
        ok = self.identity.check(self._entries) and self.events.valid()
        self.save_button.setEnabled(ok)
        return ok

    # -- building the card ---------------------------------------------------------------------------------------
    def card_from_form(self) -> CompanionCard:
        """The card the form describes, over the card being edited (what the form does not show is kept).

        Raises:
            ValidationError: the form holds something a card cannot (the message names the field).
        """
        language = self.editing_language
        base = self._card or self._template
        if base is None:
            name = self.identity.name.text().strip()
            base = CompanionCard.model_validate({
                "metadata": {"id": self.identity.card_id.text(), "name": {language: name}},
                "role": {language: ROLE.get(language, ROLE["en"]).format(name=name)},
                "actions": ["speak", "gesture"], "knowledge": ["companions_network"]})
        events = base.events.model_dump(mode="json") | {"conditions": self.events.conditions(language)}
        data = base.model_dump(mode="json", exclude_defaults=True) | {
            "metadata": self.identity.metadata(base.metadata).model_dump(mode="json"), "role": base.role,
            "greeting": self.identity.greeting_text(base.greeting),
            "events": events, "knowledge": self._knowledge(base)} | self.looks.card_fields()
        return CompanionCard.model_validate(data)

    def _knowledge(self, base: CompanionCard) -> list[str]:
        """The card's knowledge with ``search`` (the user's knowledge folders) as the box says."""
        kept = [k for k in base.knowledge if k != "search"]
        return [*kept, "search"] if self.may_search.isChecked() else kept

    def chosen_settings(self, companion_id: str) -> Settings:
        """The settings with this companion's model and voice as the form chooses."""
        settings = self.editing.settings
        before = settings.companion(companion_id)
        voices = {k: v for k, v in before.voice.items() if k != self.language}
        if self.voice_choice.chosen:
            voices[self.language] = self.voice_choice.chosen  # type: ignore[index]
        chosen = before.model_copy(update={"model": self.model_choice.chosen, "voice": voices})
        return settings.model_copy(update={"companions": {**settings.companions, companion_id: chosen}})

    # -- the model's and the voice's tests (as in the settings' Companions tab) ------------------------------------
    def _test_model_clicked(self) -> None:
        self._spawn(self._test_model())

    async def _test_model(self) -> None:
        await self.test_model()

    async def test_model(self) -> ModelCheck | None:
        """One short request to the model the form chooses, the way this companion would send it."""
        try:
            card = self.card_from_form()
        except ValidationError:
            return None
        return await self.model_choice.test(self._check_model(card))

    async def _check_model(self, card: CompanionCard) -> ModelCheck:
        return await self.editing.test_model(self.chosen_settings(card.id), card)

    def _test_voice_clicked(self) -> None:
        self._spawn(self._test_voice())

    async def _test_voice(self) -> None:
        await self.test_voice()

    async def test_voice(self) -> tuple[bool, str]:
        """Says a sentence in the voice the form chooses (else the card's) through the app's speaker."""
        card = self._card or self._template
        voice_id = self.voice_choice.chosen or (card.voice.for_language(self.language) if card else None)
        sentence = text("companion.voice.sample", self.ui_language,
                        name=self.identity.name.text().strip() or "Madoi")
        return await self.voice_choice.test(self.editing.say(sentence, voice_id))

    # -- actions -------------------------------------------------------------------------------------------------
    def add_companion(self) -> None:
        self.list.clearSelection()
        self._show(None, None)
        name = self.identity.name
        name.setText(self.t("new_name"))
        name.setFocus()
        name.selectAll()

    def duplicate(self) -> None:
        """A new companion with the words, colour, events and tools of the one shown (saved under its own id)."""
        card = self._card
        if card is None:
            return
        name = self.t("copy_of", name=card.name(self.editing_language))
        self.list.clearSelection()
        self._show(card, None)
        self._card, self._template = None, card.model_copy(update={"avatar": None})
        self.identity.show_new(name)

    async def save_current(self) -> str | None:
        """Writes the form's card and the companion's model and voice; returns its id (None when not saved)."""
        if not self._validate():
            return None
        try:
            card = self.card_from_form()
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            self.say(self.t("failed", error=f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"),
                     error=True)
            return None
        try:
            await self.editing.save(card, self.looks.picture)
            chosen = self.chosen_settings(card.id)
            if chosen.companions != self.editing.settings.companions:
                await self.editing.save_settings(chosen)
        except OSError as err:
            self.say(self.t("failed", error=err.strerror or err), error=True)
            return None
        self.refresh(select=card.id)
        self.say(self.t("saved", name=card.name(self.language)))
        self.saved.emit(card.id)
        return card.id

    def _save_clicked(self) -> None:
        self._spawn(self._save())

    async def _save(self) -> None:
        await self.save_current()

    async def remove_current(self) -> None:
        entry = self._entries.get(self.current_id or "")
        if entry is None:
            return
        name = entry.card.name(self.language)
        restoring = self.editing.is_sample(entry.id)
        await self.editing.remove(entry.id)
        self.refresh()
        self.say(self.t("restored" if restoring else "removed", name=name))

    def _remove_clicked(self) -> None:
        self._spawn(self.remove_current())

    def _restore_clicked(self) -> None:
        self._spawn(self.remove_current())

    async def import_card(self, source: Path) -> ImportResult | None:
        result = await self.files.import_card(source, set(self._entries))
        if result is None:
            return None
        self.refresh(select=result.card.id)
        self.say(self.t("imported", name=result.card.name(self.language), format=result.format))
        return result

    def _import_chosen(self, path: Path) -> None:
        self._spawn(self._import(path))

    async def _import(self, path: Path) -> None:
        await self.import_card(path)

    def _export_chosen(self, companion_id: str, path: Path) -> None:
        self._spawn(self.files.export_card(companion_id, path))

    async def set_approved(self, approved: bool) -> None:
        entry = self._entries.get(self.current_id or "")
        if entry is not None:
            await self.editing.set_approved(entry.card, approved)

    def _approve_clicked(self) -> None:
        self._spawn(self.set_approved(True))

    def _revoke_clicked(self) -> None:
        self._spawn(self.set_approved(False))

    # -- dropping a card on the editor ---------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() and u.toLocalFile().lower().endswith((".png", ".json"))
               for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self._spawn(self._import(Path(url.toLocalFile())))
        event.acceptProposedAction()

    def done(self, result: int) -> None:
        self._tasks.cancel()
        super().done(result)


def align_labels(*forms: QFormLayout) -> None:
    """One label column for forms stacked in a column, as if they were one form: each label as wide as the widest."""
    items = [form.itemAt(row, QFormLayout.ItemRole.LabelRole) for form in forms for row in range(form.rowCount())]
    labels = [label for item in items if item is not None and (label := item.widget()) is not None]
    width = max((label.sizeHint().width() for label in labels), default=0)
    for label in labels:
        label.setMinimumWidth(width)
