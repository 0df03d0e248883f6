"""Character cards in and out of the companion editor: Import… (a PNG or JSON card; one whose name is taken here
comes in beside it, under a new id) and Export… (the companion's card as a file the user chooses)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Final, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from companions.cards.character_cards import CardImportError, IdTaken, ImportResult
from ui.cards.editor_texts import TEXTS, editor_button
from ui.window.naming import named

CARD_FILTER: Final = "Character cards (*.png *.json)"


class CardFilesPort(Protocol):
    """What importing and exporting ask of the app (part of the editor's ``CompanionEditing``)."""

    async def import_file(self, source: Path, card_id: str | None = None) -> ImportResult: ...

    async def export_file(self, card_id: str, target: Path) -> Path: ...


class CardFiles(QWidget):
    """The Import… and Export… buttons, and the hint that a card may be dropped instead. The editor runs what the
    user chose (:attr:`import_chosen`, :attr:`export_chosen`) with :meth:`import_card` and :meth:`export_card`."""

    import_chosen = Signal(object)  # the Path of a card to import
    export_chosen = Signal(str, object)  # the id of the companion to export, and the Path to write
    said = Signal(str, bool)  # what came of it, and whether that is an error

    def __init__(self, files: CardFilesPort, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.files = files
        self.language = language
        self.companion_id: str | None = None  # the one Export writes
        self.import_button = editor_button("import", language)
        self.import_button.clicked.connect(self._import_clicked)
        self.export_button = editor_button("export", language)
        self.export_button.clicked.connect(self._export_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.export_button)
        drop_hint = named(QLabel(self._t("drop")), "fieldHint")
        drop_hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(drop_hint)

    def _t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    def show_companion(self, companion_id: str | None) -> None:
        """Export writes this companion's card (None: nothing to export)."""
        self.companion_id = companion_id
        self.export_button.setEnabled(companion_id is not None)

    async def import_card(self, source: Path, taken: Collection[str]) -> ImportResult | None:
        """Imports ``source``; a card whose id is one of ``taken`` comes in under the first free ``<id>-<n>``.
        None when it was not imported (and :attr:`said` why)."""
        try:
            return await self.files.import_file(source)
        except IdTaken as err:
            card_id = next(f"{err.card_id}-{n}" for n in range(2, 1000) if f"{err.card_id}-{n}" not in taken)
            try:  # a name taken by a companion here: imported beside it, under a new id
                return await self.files.import_file(source, card_id)
            except CardImportError as again:
                self.said.emit(self._t("not_imported", file=source.name, reason=again), True)
                return None
        except CardImportError as err:
            self.said.emit(self._t("not_imported", file=source.name, reason=err), True)
            return None

    async def export_card(self, companion_id: str, path: Path) -> None:
        try:
            written = await self.files.export_file(companion_id, path)
        except OSError as err:
            self.said.emit(self._t("failed", error=err.strerror or err), True)
            return
        self.said.emit(self._t("exported", file=written), False)

    def _import_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self._t("import"), str(Path.home()), CARD_FILTER)
        if path:
            self.import_chosen.emit(Path(path))

    def _export_clicked(self) -> None:
        companion_id = self.companion_id
        if companion_id is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, self._t("export"), str(Path.home() / f"{companion_id}.png"),
                                              CARD_FILTER)
        if path:
            self.export_chosen.emit(companion_id, Path(path))
