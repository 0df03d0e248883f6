"""The window's part for the companions themselves: the Madoi menu's "Companions…" (the editor), a character card
dropped on the window (imported in the editor), the user's card folder watched (a card copied in or changed by hand
is taken at once), the prompt that asks before a card the user added runs a program or sends a key, and the faces
every panel paints.

The prompt (:class:`CardApprovalPrompt`) comes up when the window attaches with cards held, and again when a card
appears or changes while running (``CastChanged`` naming a held id not asked about yet): each held card with
exactly what it would run or send, and *Approve* / *Not now*. *Approve* is a setting (``[[trust.cards]]``), saved
and applied at once; *Not now* leaves the card held (the editor and ``madoi companions approve ID`` approve it
later).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import QEvent, QFileSystemWatcher, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.cards.library import CardEntry
from companions.cards.card import CARD_SUFFIXES
from companions.common.private_files import private_dir
from companions.common.tasks import TaskSet
from companions.companion.cast import CastChanged
from companions.wire.bus import Bus, BusItem
from ui.cards.editor import CompanionEditing, CompanionEditor, sync_faces
from ui.cards.privileges import privilege_lines
from ui.roster.faces import FACES
from ui.window.attached import Attached
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, window_language
from ui.window.naming import named

SETTLE_MS: Final = 300

TEXTS: Final = Texts("companions_desk", {
    "menu": QT_TRANSLATE_NOOP("companions_desk", "&Companions…"),
    "prompt.title": QT_TRANSLATE_NOOP("companions_desk", "A companion card asks for more"),
    "prompt.intro": QT_TRANSLATE_NOOP(
        "companions_desk", "These companions take part already. What their cards would also do waits for you: "
                           "approve only what you trust."),
    "prompt.card": QT_TRANSLATE_NOOP("companions_desk", "{name} ({file}) would:"),
    "prompt.changed": QT_TRANSLATE_NOOP("companions_desk", "{name}'s card changed since you approved it; it would:"),
    "approve": QT_TRANSLATE_NOOP("companions_desk", "Approve"),
    "later": QT_TRANSLATE_NOOP("companions_desk", "Not now"),
})


class CardApprovalPrompt(QDialog):
    """Each held card with what it would run or send, exactly, and Approve / Not now."""

    def __init__(self, entries: list[CardEntry], changed: set[str], approve: Any,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "cardApprovalPrompt")
        language = window_language()  # the cards' names in it too
        self.setWindowTitle(TEXTS.text("prompt.title", language))
        self.setWindowModality(Qt.WindowModality.NonModal)
        self._approve = approve
        self.cards: dict[str, QGroupBox] = {}
        layout = QVBoxLayout(self)
        intro = QLabel(TEXTS.text("prompt.intro", language))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        for entry in entries:
            name = entry.card.name(language)
            key = "prompt.changed" if entry.id in changed else "prompt.card"
            box = named(QGroupBox(TEXTS.text(key, language, name=name, file=entry.file.name)), f"held_{entry.id}")
            column = QVBoxLayout(box)
            what = named(QLabel("\n".join(f"• {line}" for line in privilege_lines(entry.privileges, language))),
                         "heldLines")
            what.setWordWrap(True)
            what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            column.addWidget(what)
            row = QHBoxLayout()
            approve = named(QPushButton(TEXTS.text("approve", language)), "approveCardButton")
            later = named(QPushButton(TEXTS.text("later", language)), "laterCardButton")
            approve.clicked.connect(lambda _=False, e=entry: self._decided(e, True))
            later.clicked.connect(lambda _=False, e=entry: self._decided(e, False))
            row.addStretch(1)
            row.addWidget(later)
            row.addWidget(approve)
            column.addLayout(row)
            layout.addWidget(box)
            self.cards[entry.id] = box
        later_default = self.findChild(QPushButton, "laterCardButton")
        if later_default is not None:
            later_default.setDefault(True)  # Enter never approves a program by accident

    def _decided(self, entry: CardEntry, approved: bool) -> None:
        box = self.cards.pop(entry.id, None)
        if box is not None:
            box.hide()
        if approved:
            self._approve(entry)
        if not self.cards:
            self.accept()


class CompanionsDesk(Attached, QObject):
    """The editor's menu entry, the approval prompt and the faces, for one main window."""

    def __init__(self, window: QMainWindow, editing: CompanionEditing, bus: Bus, menu_anchor: QAction) -> None:
        super().__init__(window)
        self.window = window
        self.editing = editing
        self.editor: CompanionEditor | None = None
        self.prompt: CardApprovalPrompt | None = None
        self._asked: set[tuple[str, str]] = set()  # (id, digest) of the held cards already shown
        self._tasks = TaskSet("companions-desk")
        self._watcher: QFileSystemWatcher | None = None
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._take_folder)
        self.follow_bus(bus, ("events",))
        self.action = named(QAction(TEXTS.text("menu"), window), "companionsAction")
        self.action.triggered.connect(self.open_editor)
        menu = next((m for m in window.menuBar().findChildren(QMenu) if menu_anchor in m.actions()), None)
        if menu is not None:
            menu.insertAction(menu_anchor, self.action)
        window.addAction(self.action)
        window.setAcceptDrops(True)  # a character card dropped on the window opens the editor and comes in
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The window (the parent) rather than self.window: Qt filters the window's last events while Python
        # tears this object down, its attributes gone ("no attribute 'window'" twice at every close).
        if watched is not self.parent() or event.type() not in (QEvent.Type.DragEnter, QEvent.Type.DragMove,
                                                                QEvent.Type.Drop):
            return False
        assert isinstance(event, QDropEvent)  # (QDragEnterEvent and QDragMoveEvent are drop events too)
        cards = [Path(u.toLocalFile()) for u in event.mimeData().urls()
                 if u.isLocalFile() and u.toLocalFile().lower().endswith((".png", ".json"))]
        if not cards:
            return False
        event.acceptProposedAction()
        if event.type() == QEvent.Type.Drop:
            editor = self.open_editor()
            for card in cards:
                self._spawn(self._import(editor, card))
        return True

    async def _import(self, editor: CompanionEditor, card: Path) -> None:
        await editor.import_card(card)

    def on_attach(self) -> None:
        sync_faces(self.editing)
        self._watch_folder()
        self.ask_about_held()

    def on_detach(self) -> None:
        self._tasks.cancel()
        self._settle.stop()
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None
        FACES.update({})  # the window's faces go with it

    # -- the user's card folder, watched: a card copied in (or changed by hand) is taken at once --------------------
    def _watch_folder(self) -> None:
        folder = self.editing.user_dir
        try:
            private_dir(folder)
        except OSError:
            return  # no folder, nothing to watch (the editor says why when it cannot save)
        self._watcher = QFileSystemWatcher([str(folder)], self)
        self._watcher.directoryChanged.connect(self._folder_changed)
        self._watcher.fileChanged.connect(self._folder_changed)
        self._watch_files()

    def _watch_files(self) -> None:
        if self._watcher is None:
            return
        cards = [str(p) for p in self.editing.user_dir.glob("*") if p.suffix in CARD_SUFFIXES]
        if cards:
            self._watcher.addPaths([c for c in cards if c not in self._watcher.files()])

    def _folder_changed(self, _path: str) -> None:
        self._settle.start()  # a save is several file events: take the folder once they settled

    def _take_folder(self) -> None:
        self._watch_files()
        self._spawn(self._reload())

    async def _reload(self) -> None:
        await self.editing.reload()

    def retranslate(self) -> None:
        """The menu entry's words again (the window calls it on LanguageChange)."""
        self.action.setText(TEXTS.text("menu"))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return self._tasks.spawn(coro, name="companions-desk")

    def on_item(self, item: BusItem) -> None:
        if not isinstance(item, CastChanged):
            return
        sync_faces(self.editing)
        if self.editor is not None and self.editor.isVisible():
            self.editor.refresh(keep_form=True)  # what the user is typing stays
        if item.held:
            self.ask_about_held()

    def ask_about_held(self) -> CardApprovalPrompt | None:
        """Shows the cards held that were not asked about yet (this session, for this content)."""
        held = [e for e in self.editing.entries() if not e.trusted]
        new = [e for e in held if (e.id, e.privileges.digest) not in self._asked]
        if not new:
            return None
        self._asked |= {(e.id, e.privileges.digest) for e in new}
        approved_before = {a.card for a in self.editing.settings.trust.cards}
        if self.prompt is not None:
            self.prompt.close()
        self.prompt = CardApprovalPrompt(new, {e.id for e in new if e.id in approved_before},
                                         self._approve, self.window)
        self.prompt.show()
        return self.prompt

    def _approve(self, entry: CardEntry) -> None:
        self._spawn(self.editing.set_approved(entry.card, True))

    def open_editor(self) -> CompanionEditor:
        if self.editor is not None and self.editor.isVisible():
            self.editor.raise_()
            self.editor.activateWindow()
            return self.editor
        self.editor = CompanionEditor(self.editing, self.window)
        self.editor.show()
        return self.editor
