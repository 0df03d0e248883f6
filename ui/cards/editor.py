"""The companion editor: add, edit, duplicate and remove companions, import character cards and export them, and
approve what a card runs or sends, in one window (the Madoi menu's "Companions…", or a roster row's "Edit…").

The list shows every companion with its picture; the form edits the selected one: its name (the id is derived from
it while the companion is new, and stays), its words in the language chosen (personality, story, sample lines, first
greeting), its colour and picture, its model and voice (the settings' ``[companions.<id>]``), and its events, whose
CEL expressions are checked as they are typed. Save writes the card file into the user's folder and the running app
takes it at once (app/cards/editing.py); a sample companion that was edited can be restored as shipped. What a
card would run or send (its MCP commands, its endpoint and key variable) is shown exactly, with Approve and Revoke.
What an imported card holds that Madoi does not use is listed, kept in the file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final, Protocol

from pydantic import ValidationError
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.cards.checks import ModelCheck
from app.cards.library import CardEntry
from app.devices.voices import VoiceChoice
from app.settings.model import CompanionSettings, Settings
from companions.cards.card import CompanionCard, Localized, localized
from companions.cards.cel_runtime import cel
from companions.cards.character_cards import ROLE, CardImportError, IdTaken, ImportResult, derive_id
from companions.common.languages import Language
from companions.common.tasks import TaskSet
from ui.cards.privileges import privilege_lines
from ui.roster.avatars import avatar_pixmap
from ui.roster.colors import companion_color
from ui.roster.faces import FACES, Face
from ui.settings.companions_tab import model_check_text
from ui.settings.form import button_row, show_result, voice_test
from ui.settings.texts import text
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, window_language
from ui.window.naming import named

log = logging.getLogger(__name__)
AVATAR: Final = 32
PREVIEW: Final = 96
CARD_FILTER: Final = "Character cards (*.png *.json)"
PICTURE_FILTER: Final = "Pictures (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"

TEXTS: Final = Texts("companion_editor", {
    "title": QT_TRANSLATE_NOOP("companion_editor", "Companions"),
    "add": QT_TRANSLATE_NOOP("companion_editor", "Add"),
    "duplicate": QT_TRANSLATE_NOOP("companion_editor", "Duplicate"),
    "remove": QT_TRANSLATE_NOOP("companion_editor", "Remove"),
    "restore": QT_TRANSLATE_NOOP("companion_editor", "Restore sample"),
    "import": QT_TRANSLATE_NOOP("companion_editor", "Import…"),
    "export": QT_TRANSLATE_NOOP("companion_editor", "Export…"),
    "save": QT_TRANSLATE_NOOP("companion_editor", "Save"),
    "close": QT_TRANSLATE_NOOP("companion_editor", "Close"),
    "name": QT_TRANSLATE_NOOP("companion_editor", "Name"),
    "id": QT_TRANSLATE_NOOP("companion_editor", "Id"),
    "texts": QT_TRANSLATE_NOOP("companion_editor", "Words in"),
    "lang.ja": QT_TRANSLATE_NOOP("companion_editor", "Japanese"),
    "lang.en": QT_TRANSLATE_NOOP("companion_editor", "English"),
    "personality": QT_TRANSLATE_NOOP("companion_editor", "Personality"),
    "story": QT_TRANSLATE_NOOP("companion_editor", "Story"),
    "samples": QT_TRANSLATE_NOOP("companion_editor", "How it talks (sample lines, one per line)"),
    "greeting": QT_TRANSLATE_NOOP("companion_editor", "First greeting"),
    # one line under the field (a wrapped label breaks the form's heights); the whole rule in the tooltip
    "greeting.hint": QT_TRANSLATE_NOOP("companion_editor", "Said aloud to open a new conversation; no model is asked."),
    "greeting.hint.tip": QT_TRANSLATE_NOOP(
        "companion_editor", "Said aloud, with no model asked, when you start a new conversation with this companion "
        "(the one chosen in To, or the only one here). Empty: it waits for you to speak first."),
    "colour": QT_TRANSLATE_NOOP("companion_editor", "Colour"),
    "picture": QT_TRANSLATE_NOOP("companion_editor", "Picture"),
    "choose": QT_TRANSLATE_NOOP("companion_editor", "Choose…"),
    "model": QT_TRANSLATE_NOOP("companion_editor", "Model"),
    "model.hint": QT_TRANSLATE_NOOP("companion_editor", "Empty: as the card says, else the default model"),
    "voice": QT_TRANSLATE_NOOP("companion_editor", "Voice"),
    "voice.card": QT_TRANSLATE_NOOP("companion_editor", "As the card says"),
    "knowledge": QT_TRANSLATE_NOOP("companion_editor", "Knowledge"),
    "may_search": QT_TRANSLATE_NOOP("companion_editor", "May search your knowledge folders"),
    "may_search.tip": QT_TRANSLATE_NOOP(
        "companion_editor", "It searches them and recalls what they say; the folders are chosen in Settings > Search."),
    "events": QT_TRANSLATE_NOOP("companion_editor", "Events (for those who want them)"),
    "event.add": QT_TRANSLATE_NOOP("companion_editor", "Add a condition"),
    "event.expression": QT_TRANSLATE_NOOP("companion_editor", "When (CEL), e.g. need_response == true"),
    "event.instruction": QT_TRANSLATE_NOOP("companion_editor", "Then (an instruction)"),
    "event.ok": QT_TRANSLATE_NOOP("companion_editor", "valid CEL"),
    "event.bad": QT_TRANSLATE_NOOP("companion_editor", "not valid CEL: {error}"),
    "trust.title": QT_TRANSLATE_NOOP("companion_editor", "What this card runs and sends"),
    "trust.held": QT_TRANSLATE_NOOP("companion_editor", "Held until you approve it: it"),
    "trust.approved": QT_TRANSLATE_NOOP("companion_editor", "Approved by you: it"),
    "trust.sample": QT_TRANSLATE_NOOP("companion_editor", "A sample shipped with Madoi: it"),
    "approve": QT_TRANSLATE_NOOP("companion_editor", "Approve"),
    "revoke": QT_TRANSLATE_NOOP("companion_editor", "Revoke"),
    "unused": QT_TRANSLATE_NOOP("companion_editor", "Kept from the imported card, not used by Madoi: {fields}"),
    "lore": QT_TRANSLATE_NOOP("companion_editor", "Lorebook: {n} entries ({keys} …)"),
    "err.name": QT_TRANSLATE_NOOP("companion_editor", "A companion needs a name."),
    "err.id": QT_TRANSLATE_NOOP("companion_editor", "Use letters, digits, '-', '_' or '.' (at most 64)."),
    "err.taken": QT_TRANSLATE_NOOP("companion_editor", "Another companion has this id."),
    "saved": QT_TRANSLATE_NOOP("companion_editor", "Saved: {name} talks like this from its next turn."),
    "removed": QT_TRANSLATE_NOOP("companion_editor", "{name} left the conversation; its card was removed."),
    "restored": QT_TRANSLATE_NOOP("companion_editor", "{name} is back as shipped."),
    "imported": QT_TRANSLATE_NOOP("companion_editor", "{name} joined from a {format} card."),
    "not_imported": QT_TRANSLATE_NOOP("companion_editor", "{file} was not imported: {reason}"),
    "exported": QT_TRANSLATE_NOOP("companion_editor", "Written to {file}."),
    "failed": QT_TRANSLATE_NOOP("companion_editor", "Not saved: {error}"),
    "drop": QT_TRANSLATE_NOOP("companion_editor", "Drop a character card (PNG or JSON) here to import it."),
    "new_name": QT_TRANSLATE_NOOP("companion_editor", "New companion"),
    "copy_of": QT_TRANSLATE_NOOP("companion_editor", "{name} (copy)"),
})


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


def _with_text(old: Localized, language: str, text: str) -> Localized:
    """``old`` with its ``language`` text replaced (a plain string stands for every other language)."""
    current = localized(old, language) if old else ""
    if text == current:
        return old
    others = {k: v for k, v in old.items() if k != language} if isinstance(old, dict) else (
        {("en" if language == "ja" else "ja"): old} if old else {})
    merged = {**others, language: text} if text else others
    return merged or ""


def sync_faces(editing: CompanionEditing) -> bool:
    """The window's faces from the cards now (ui/roster/faces.py); True when any changed."""
    return FACES.update({i: Face(p, c) for i, (p, c) in editing.faces().items()})


class EventRow(QWidget):
    """One condition of the card's events: a CEL expression (checked as typed) and its instruction."""

    removed = Signal(object)

    def __init__(self, expression: str, instruction: str, tool: str | None, language: str,
                 original: Localized = "") -> None:
        super().__init__()
        self.tool = tool
        self.original = original  # the instruction in every language the card has it (the form edits one)
        self.language = language
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        row = QHBoxLayout()
        self.expression = named(QLineEdit(expression), "eventExpression")
        self.expression.setPlaceholderText(TEXTS.text("event.expression", language))
        self.instruction = named(QLineEdit(instruction), "eventInstruction")
        self.instruction.setPlaceholderText(TEXTS.text("event.instruction", language))
        drop = QPushButton("×")
        drop.setFixedWidth(28)
        drop.clicked.connect(self._remove)
        row.addWidget(self.expression, 2)
        row.addWidget(self.instruction, 3)
        row.addWidget(drop)
        self.check = named(QLabel(), "eventCheck")
        self.check.setWordWrap(True)
        layout.addLayout(row)
        layout.addWidget(self.check)
        self.expression.textChanged.connect(self.validate)
        self.validate()

    def _remove(self) -> None:
        self.removed.emit(self)

    def validate(self) -> bool:
        """Compiles the expression as it stands; the label under it says whether it is valid CEL."""
        text = self.expression.text().strip()
        if not text:
            self.check.setText("")
            return False
        try:
            cel.compile(text)
        except Exception as err:  # the library raises ValueError and friends; all mean "not valid CEL"
            self.check.setText(TEXTS.text("event.bad", self.language, error=str(err).splitlines()[0][:160]))
            self.check.setProperty("result", "error")
            return False
        self.check.setText(TEXTS.text("event.ok", self.language))
        self.check.setProperty("result", "ok")
        return True


class CompanionEditor(QDialog):
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
        self._picture: Path | None = None  # a picture chosen, not yet saved
        self._colour = "#7aa2f7"
        self._colour_chosen = False  # a card that names no colour of its own keeps the palette's
        self._events: list[EventRow] = []
        self._loading = False

        self.list = named(QListWidget(), "companionList")
        self.list.setIconSize(QSize(AVATAR, AVATAR))
        self.list.currentItemChanged.connect(self._selected)
        buttons = QHBoxLayout()
        self.add_button = self._button("add", self.add_companion, buttons)
        self.duplicate_button = self._button("duplicate", self.duplicate, buttons)
        self.remove_button = self._button("remove", self._remove_clicked, buttons)
        files = QHBoxLayout()
        self.import_button = self._button("import", self._import_clicked, files)
        self.export_button = self._button("export", self._export_clicked, files)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addLayout(buttons)
        left.addLayout(files)
        drop_hint = named(QLabel(self.t("drop")), "fieldHint")
        drop_hint.setWordWrap(True)
        left.addWidget(drop_hint)

        form_host = QWidget()
        self.form = QFormLayout(form_host)
        self.name = named(QLineEdit(), "companionName")
        self.card_id = named(QLineEdit(), "companionId")
        self.id_error = named(QLabel(), "fieldError")
        self.text_language = named(QComboBox(), "textLanguage")
        for code in ("ja", "en"):
            self.text_language.addItem(self.t(f"lang.{code}"), code)
        self.personality = named(QPlainTextEdit(), "companionPersonality")
        self.story = named(QPlainTextEdit(), "companionStory")
        self.samples = named(QPlainTextEdit(), "companionSamples")
        for box in (self.personality, self.story, self.samples):
            box.setTabChangesFocus(True)
            box.setFixedHeight(72)
        self.greeting = named(QLineEdit(), "companionGreeting")
        self.colour_button = named(QPushButton(), "colourButton")
        self.colour_button.clicked.connect(self._choose_colour)
        self.preview = named(QLabel(), "picturePreview")
        self.preview.setFixedSize(PREVIEW, PREVIEW)
        choose = named(QPushButton(self.t("choose")), "choosePictureButton")
        choose.clicked.connect(self._choose_picture)
        picture_row = QHBoxLayout()
        picture_row.addWidget(self.preview)
        picture_row.addWidget(choose)
        picture_row.addStretch(1)
        self.model = named(QComboBox(), "companionModel")
        self.model.setEditable(True)
        line = self.model.lineEdit()
        if line is not None:
            line.setPlaceholderText(self.t("model.hint"))
        self.voice = named(QComboBox(), "companionVoice")
        self.test_model_button = named(QPushButton(text("companion.test_model", self.ui_language)), "testModelButton")
        self.test_model_button.clicked.connect(self._test_model_clicked)
        self.model_result = named(QLabel(), "modelResult")
        self.model_result.setWordWrap(True)
        self.test_voice_button = named(QPushButton(text("companion.test_voice", self.ui_language)),
                                       "testCompanionVoiceButton")
        self.test_voice_button.clicked.connect(self._test_voice_clicked)
        self.test_voice_button.setEnabled(editing.can_speak)
        self.voice_result = named(QLabel(), "companionVoiceResult")
        self.voice_result.setWordWrap(True)
        self.events_box = QVBoxLayout()
        add_event = named(QPushButton(self.t("event.add")), "addEventButton")
        add_event.clicked.connect(lambda: self._add_event("", "", "speak"))
        events = QGroupBox(self.t("events"))
        events_layout = QVBoxLayout(events)
        events_layout.addLayout(self.events_box)
        events_layout.addWidget(add_event, 0, Qt.AlignmentFlag.AlignLeft)
        self.trust_box = named(QGroupBox(self.t("trust.title")), "trustBox")
        trust_layout = QVBoxLayout(self.trust_box)
        self.trust_text = named(QLabel(), "trustText")
        self.trust_text.setWordWrap(True)
        self.trust_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.approve_button = self._button("approve", self._approve_clicked, None)
        self.revoke_button = self._button("revoke", self._revoke_clicked, None)
        trust_buttons = QHBoxLayout()
        trust_buttons.addWidget(self.approve_button)
        trust_buttons.addWidget(self.revoke_button)
        trust_buttons.addStretch(1)
        trust_layout.addWidget(self.trust_text)
        trust_layout.addLayout(trust_buttons)
        self.kept = named(QLabel(), "keptFields")
        self.kept.setWordWrap(True)
        self.form.addRow(self.t("name"), self.name)
        self.form.addRow(self.t("id"), self.card_id)
        self.form.addRow("", self.id_error)
        self.form.addRow(self.t("texts"), self.text_language)
        self.form.addRow(self.t("personality"), self.personality)
        self.form.addRow(self.t("story"), self.story)
        self.form.addRow(self.t("samples"), self.samples)
        self.form.addRow(self.t("greeting"), self.greeting)
        self.greeting_hint = named(QLabel(self.t("greeting.hint")), "fieldHint")  # what the greeting is for
        self.greeting_hint.setToolTip(self.t("greeting.hint.tip"))
        self.greeting.setToolTip(self.t("greeting.hint.tip"))
        self.form.addRow("", self.greeting_hint)
        self.form.addRow(self.t("colour"), self.colour_button)
        self.form.addRow(self.t("picture"), picture_row)
        self.form.addRow(self.t("model"), self.model)
        self.form.addRow("", button_row(self.test_model_button, self.model_result))
        self.form.addRow(self.t("voice"), self.voice)
        self.form.addRow("", button_row(self.test_voice_button, self.voice_result))
        self.may_search = named(QCheckBox(self.t("may_search")), "maySearchCheck")
        self.may_search.setToolTip(self.t("may_search.tip"))
        self.form.addRow(self.t("knowledge"), self.may_search)
        self.form.addRow(events)
        self.form.addRow(self.trust_box)
        self.form.addRow(self.kept)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the form follows the width
        scroll.setWidget(form_host)

        bottom = QHBoxLayout()
        self.note = named(QLabel(), "editorNote")
        self.note.setWordWrap(True)
        bottom.addWidget(self.note, 1)
        self.restore_button = self._button("restore", self._restore_clicked, bottom)
        self.save_button = self._button("save", self._save_clicked, bottom)
        self._button("close", self.close, bottom)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(scroll, 3)
        outer = QVBoxLayout(self)
        outer.addLayout(body, 1)
        outer.addLayout(bottom)

        self.name.textChanged.connect(self._name_changed)
        self.card_id.textChanged.connect(self._validate)
        self.text_language.currentIndexChanged.connect(self._language_switched)
        self.refresh()

    # -- helpers -------------------------------------------------------------------------------------------------
    def t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    def _button(self, key: str, slot: Any, layout: QHBoxLayout | None) -> QPushButton:
        button = named(QPushButton(self.t(key)), f"{key}CompanionButton")
        button.clicked.connect(slot)
        if layout is not None:
            layout.addWidget(button)
        return button

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return self._tasks.spawn(coro, name="companion-editor")

    def say(self, text: str, *, error: bool = False) -> None:
        self.note.setText(text)
        self.note.setProperty("result", "error" if error else "ok")
        self.note_changed.emit(text)

    @property
    def ui_language(self) -> Language:
        return "ja" if self.language == "ja" else "en"

    @property
    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    @property
    def editing_language(self) -> str:
        return str(self.text_language.currentData())

    # -- the list ------------------------------------------------------------------------------------------------
    def refresh(self, select: str | None = None, *, keep_form: bool = False) -> None:
        """Lists the companions again from their cards (after a save, an import, a removal). ``keep_form``: a
        change made elsewhere (the folder, an approval) leaves what is being typed alone, unless the companion
        shown is gone."""
        sync_faces(self.editing)
        keep = select or self.current_id
        editing_new = self._card is None  # a new companion (or a duplicate) being written
        self._entries = {e.id: e for e in self.editing.entries()}
        self.list.blockSignals(True)
        self.list.clear()
        for entry in self._entries.values():
            name = entry.card.name(self.language)
            label = name if entry.trusted else f"{name}  ⚠"
            item = QListWidgetItem(QIcon(avatar_pixmap(entry.id, name, AVATAR)), label)
            item.setData(Qt.ItemDataRole.UserRole, entry.id)
            item.setToolTip(f"{name} ({entry.id}) — {entry.file}")
            self.list.addItem(item)
        self.list.blockSignals(False)
        ids = list(self._entries)
        if keep_form and (editing_new or keep in ids):
            if keep in ids and not editing_new:
                self.list.blockSignals(True)
                self.list.setCurrentRow(ids.index(keep))
                self.list.blockSignals(False)
                entry = self._entries[keep]
                self._show_trust(entry)  # approved or revoked meanwhile
            return
        row = ids.index(keep) if keep in ids else 0
        if ids:
            self.list.setCurrentRow(row)
            self._selected()

    def _selected(self, *_: object) -> None:
        companion_id = self.current_id
        entry = self._entries.get(companion_id or "")
        if entry is not None:
            self._show(entry.card, entry)

    # -- the form ------------------------------------------------------------------------------------------------
    def _show(self, card: CompanionCard | None, entry: CardEntry | None) -> None:
        """Fills the form with ``card`` (None: a new companion)."""
        self._loading = True
        self._card, self._template = card, None
        self._picture = None
        language = self.language
        texts = card.metadata.personality if card is not None else None
        if isinstance(texts, dict) and texts and language not in texts:
            language = next(iter(texts))  # an imported card: the language it is written in
        self.text_language.setCurrentIndex(max(0, self.text_language.findData(language)))
        self.name.setText(card.name(self.editing_language) if card is not None else "")
        self.card_id.setText(card.id if card is not None else "")
        self.card_id.setReadOnly(card is not None)
        self._fill_texts()
        own = card is not None and "colour" in card.model_fields_set
        self._colour_chosen = own
        self._colour = card.colour if card is not None and own else companion_color(
            card.id if card is not None else "new").name()
        self._paint_colour()
        self._paint_preview()
        chosen = self.editing.settings.companion(card.id) if card is not None else CompanionSettings()
        self.model.setEditText(chosen.model or "")
        self.voice.clear()
        card_voice = card.voice.for_language(self.language) if card is not None else None
        self.voice.addItem(self.t("voice.card") + (f" ({card_voice})" if card_voice else ""), "")
        for choice in self.editing.voices(self.language):
            self.voice.addItem(choice.name + (f" {choice.variant}" if choice.variant else ""), choice.id)
        wanted = chosen.voice.get(self.language, "")  # type: ignore[call-overload]
        if wanted and self.voice.findData(wanted) < 0:
            self.voice.addItem(wanted, wanted)
        self.voice.setCurrentIndex(max(0, self.voice.findData(wanted)))
        self.may_search.setChecked(card is not None and "search" in card.knowledge)
        for row in self._events:
            row.deleteLater()
        self._events = []
        if card is not None:
            for condition in card.events.conditions:
                for step in condition.execute:
                    self._add_event(condition.expression, localized(step.instruction, self.editing_language),
                                    step.tool, step.instruction)
        self._show_trust(entry)
        self._show_kept(card)
        sample = entry is not None and entry.origin == "sample"
        self.restore_button.setVisible(entry is not None and entry.origin == "user"
                                       and self.editing.is_sample(entry.id))
        self.remove_button.setEnabled(entry is not None and not sample
                                      and not self.editing.is_sample(entry.id))
        self.duplicate_button.setEnabled(card is not None)
        self.export_button.setEnabled(entry is not None)
        self._loading = False
        self._validate()

    def _fill_texts(self) -> None:
        card = self._card
        language = self.editing_language
        m = card.metadata if card is not None else None
        self.personality.setPlainText(localized(m.personality, language) if m is not None else "")
        self.story.setPlainText(localized(m.story, language) if m is not None else "")
        self.samples.setPlainText(localized(m.sample, language) if m is not None else "")
        self.greeting.setText(localized(card.greeting, language) if card is not None else "")

    def _language_switched(self) -> None:
        if not self._loading:
            self._fill_texts()

    def _show_trust(self, entry: CardEntry | None) -> None:
        lines = privilege_lines(entry.privileges, self.language) if entry is not None else []
        self.trust_box.setVisible(bool(lines))
        if entry is None or not lines:
            return
        state = "trust.sample" if entry.origin == "sample" else "trust.approved" if entry.trusted else "trust.held"
        self.trust_text.setText(self.t(state) + "\n" + "\n".join(f"• {line}" for line in lines))
        self.approve_button.setVisible(entry.origin == "user" and not entry.trusted)
        self.revoke_button.setVisible(entry.origin == "user" and entry.trusted)

    def _show_kept(self, card: CompanionCard | None) -> None:
        parts = []
        if card is not None and card.unused:
            parts.append(self.t("unused", fields=", ".join(card.unused)))
        if card is not None and card.lore:
            keys = ", ".join(k for e in card.lore[:4] for k in e.keys[:2])
            parts.append(self.t("lore", n=len(card.lore), keys=keys))
        self.kept.setText("\n".join(parts))
        self.kept.setToolTip("\n".join(f"{k}: {str(v)[:200]}" for k, v in (card.unused if card else {}).items()))
        self.kept.setVisible(bool(parts))

    def _paint_colour(self) -> None:
        self.colour_button.setText(self._colour)
        self.colour_button.setStyleSheet(f"background-color: {self._colour}; color: white;")

    def _paint_preview(self) -> None:
        if self._picture is not None:
            pixmap = QPixmap(str(self._picture))
            if not pixmap.isNull():
                self.preview.setPixmap(pixmap.scaled(PREVIEW, PREVIEW, Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.SmoothTransformation))
                return
        card = self._card
        name = self.name.text().strip() or "?"
        self.preview.setPixmap(avatar_pixmap(card.id if card is not None else self.card_id.text() or "new",
                                             name, PREVIEW))

    def _add_event(self, expression: str, instruction: str, tool: str | None, original: Localized = "") -> EventRow:
        row = EventRow(expression, instruction, tool, self.language, original)
        row.removed.connect(self._remove_event)
        row.expression.textChanged.connect(self._validate)
        self._events.append(row)
        self.events_box.addWidget(row)
        return row

    def _remove_event(self, row: EventRow) -> None:
        self._events.remove(row)
        row.deleteLater()
        self._validate()

    def _name_changed(self, text: str) -> None:
        if not self._loading and self._card is None:  # a new companion: its id follows its name until saved
            self.card_id.setText(derive_id(text) if text.strip() else "")
        self._validate()

    def _validate(self) -> bool:
        problem = ""
        if not self.name.text().strip():
            problem = self.t("err.name")
        elif not self.card_id.text() or len(self.card_id.text()) > 64 or not all(
                c.isascii() and (c.isalnum() or c in "-_.") for c in self.card_id.text()):
            problem = self.t("err.id")
        elif self._card is None and self.card_id.text() in self._entries:
            problem = self.t("err.taken")
        self.id_error.setText(problem)
        self.id_error.setVisible(bool(problem))
        ok = not problem and all(row.validate() or not row.expression.text().strip() for row in self._events)
        self.save_button.setEnabled(ok)
        return ok

    def _choose_colour(self) -> None:
        chosen = QColorDialog.getColor(QColor(self._colour), self, self.t("colour"))
        if chosen.isValid():
            self.set_colour(chosen.name())

    def set_colour(self, colour: str) -> None:
        self._colour = colour
        self._colour_chosen = True
        self._paint_colour()

    def _choose_picture(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.t("picture"), str(Path.home()), PICTURE_FILTER)
        if path:
            self.set_picture(Path(path))

    def set_picture(self, path: Path) -> None:
        self._picture = path
        self._paint_preview()

    # -- building the card ---------------------------------------------------------------------------------------
    def card_from_form(self) -> CompanionCard:
        """The card the form describes, over the card being edited (what the form does not show is kept).

        Raises:
            ValidationError: the form holds something a card cannot (the message names the field).
        """
        language = self.editing_language
        base = self._card or self._template
        name = self.name.text().strip()
        if base is None:
            base = CompanionCard.model_validate({"metadata": {"id": self.card_id.text(), "name": {language: name}},
                                                 "role": {language: ROLE.get(language, ROLE["en"]).format(name=name)},
                                                 "actions": ["speak", "gesture"], "knowledge": ["companions_network"]})
        m = base.metadata
        metadata = m.model_copy(update={
            "id": self.card_id.text(),
            "name": _with_text(m.name, language, name),
            "personality": _with_text(m.personality, language, self.personality.toPlainText().strip()),
            "story": _with_text(m.story, language, self.story.toPlainText().strip()),
            "sample": _with_text(m.sample, language, self.samples.toPlainText().strip()),
        })
        conditions: list[dict[str, Any]] = []
        for row in self._events:
            expression = row.expression.text().strip()
            if expression:
                said = _with_text(row.original, language, row.instruction.text().strip() or "-")
                conditions.append({"expression": expression, "execute": [{"instruction": said, "tool": row.tool}]})
        events = base.events.model_dump(mode="json") | {"conditions": conditions}
        data = base.model_dump(mode="json", exclude_defaults=True) | {
            "metadata": metadata.model_dump(mode="json"), "role": base.role,
            "greeting": _with_text(base.greeting, language, self.greeting.text().strip()),
            "events": events, "knowledge": self._knowledge(base)} | (
                {"colour": self._colour} if self._colour_chosen else {})
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
        if self.voice.currentData():
            voices[self.language] = str(self.voice.currentData())  # type: ignore[index]
        chosen = before.model_copy(update={"model": self.model.currentText().strip() or None, "voice": voices})
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
        self.test_model_button.setEnabled(False)
        show_result(self.model_result, "busy", text("testing", self.ui_language))
        try:
            check = await self.editing.test_model(self.chosen_settings(card.id), card)
        except Exception as err:  # an injected tester that raises is still a result for the user
            check = ModelCheck("failed", error=f"{type(err).__name__}: {err}")
        finally:
            self.test_model_button.setEnabled(True)
        self.model_result.setToolTip(check.error)
        show_result(self.model_result, "ok" if check.ok else "error", model_check_text(check, self.ui_language))
        return check

    def _test_voice_clicked(self) -> None:
        self._spawn(self._test_voice())

    async def _test_voice(self) -> None:
        await self.test_voice()

    async def test_voice(self) -> tuple[bool, str]:
        """Says a sentence in the voice the form chooses (else the card's) through the app's speaker."""
        card = self._card or self._template
        voice_id = str(self.voice.currentData() or "") or (card.voice.for_language(self.language) if card else None)
        sentence = text("companion.voice.sample", self.ui_language, name=self.name.text().strip() or "Madoi")
        return await voice_test(self.editing.say(sentence, voice_id), self.test_voice_button, self.voice_result,
                                self.ui_language)

    # -- actions -------------------------------------------------------------------------------------------------
    def add_companion(self) -> None:
        self.list.clearSelection()
        self._show(None, None)
        self.name.setText(self.t("new_name"))
        self.name.setFocus()
        self.name.selectAll()

    def duplicate(self) -> None:
        """A new companion with the words, colour, events and tools of the one shown (saved under its own id)."""
        card = self._card
        if card is None:
            return
        name = self.t("copy_of", name=card.name(self.editing_language))
        self.list.clearSelection()
        self._show(card, None)
        self._card, self._template = None, card.model_copy(update={"avatar": None})
        self.card_id.setReadOnly(False)
        self.name.setText(name)

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
            await self.editing.save(card, self._picture)
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
        existing = set(self._entries)
        try:
            result = await self.editing.import_file(source)
        except IdTaken as taken:
            card_id = next(f"{taken.card_id}-{n}" for n in range(2, 1000) if f"{taken.card_id}-{n}" not in existing)
            try:  # a name taken by a companion here: imported beside it, under a new id
                result = await self.editing.import_file(source, card_id)
            except CardImportError as again:
                self.say(self.t("not_imported", file=source.name, reason=again), error=True)
                return None
        except CardImportError as err:
            self.say(self.t("not_imported", file=source.name, reason=err), error=True)
            return None
        self.refresh(select=result.card.id)
        self.say(self.t("imported", name=result.card.name(self.language), format=result.format))
        return result

    def _import_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.t("import"), str(Path.home()), CARD_FILTER)
        if path:
            self._spawn(self._import(Path(path)))

    async def _import(self, path: Path) -> None:
        await self.import_card(path)

    def _export_clicked(self) -> None:
        companion_id = self.current_id
        if companion_id is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, self.t("export"), str(Path.home() / f"{companion_id}.png"),
                                              CARD_FILTER)
        if path:
            self._spawn(self._export(companion_id, Path(path)))

    async def _export(self, companion_id: str, path: Path) -> None:
        try:
            written = await self.editing.export_file(companion_id, path)
        except OSError as err:
            self.say(self.t("failed", error=err.strerror or err), error=True)
            return
        self.say(self.t("exported", file=written))

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
