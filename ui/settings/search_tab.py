"""The settings dialog's Search tab: the knowledge folders the companions and the search panel search (a list
with Add… and Remove); the app indexes new ones as soon as the settings are saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QLabel, QListWidget, QPushButton, QVBoxLayout

from app.settings.model import SearchSettings
from ui.settings.form import SettingsPage, Spawn, button_row
from ui.window.naming import named


class SearchPage(SettingsPage):
    def __init__(self, search: SearchSettings, errors: dict[str, QLabel], spawn: Spawn) -> None:
        super().__init__(errors, spawn)
        column = QVBoxLayout(self)
        title = QLabel(self.t("folders"))
        hint = named(QLabel(self.t("folders.hint")), "fieldHint")
        hint.setWordWrap(True)
        self.folders = named(QListWidget(), "knowledgeFolders")
        title.setBuddy(self.folders)
        for folder in search.folders:
            self.folders.addItem(str(folder))
        self.add_button = named(QPushButton(self.t("folders.add")), "addFolderButton")
        self.remove_button = named(QPushButton(self.t("folders.remove")), "removeFolderButton")
        self.add_button.clicked.connect(self.choose_folder)
        self.remove_button.clicked.connect(self.remove_selected)
        self.folders.currentRowChanged.connect(self._selection_changed)
        self._selection_changed()
        column.addWidget(title)
        column.addWidget(hint)
        column.addWidget(self.folders, 1)
        column.addWidget(self.error_label("search.folders"))
        column.addWidget(button_row(self.add_button, self.remove_button, QLabel()))

    def choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, self.t("folders.choose"), str(Path.home()))
        if chosen:
            self.add_folder(Path(chosen))

    def add_folder(self, folder: Path) -> None:
        """Adds ``folder`` to the list (once)."""
        if str(folder) not in self.folder_list():
            self.folders.addItem(str(folder))
            self.folders.setCurrentRow(self.folders.count() - 1)
            self.changed.emit()

    def remove_selected(self) -> None:
        row = self.folders.currentRow()
        if row >= 0:
            self.folders.takeItem(row)
            self.changed.emit()

    def _selection_changed(self, *_: object) -> None:
        self.remove_button.setEnabled(self.folders.currentRow() >= 0)

    def folder_list(self) -> list[str]:
        return [self.folders.item(i).text() for i in range(self.folders.count())]

    def values(self) -> dict[str, dict[str, Any]]:
        return {"search": {"folders": [Path(f) for f in self.folder_list()]}}

    def rules(self, errors: dict[str, str]) -> None:
        missing = [f for f in self.folder_list() if not Path(f).is_dir()]
        if missing:
            errors.setdefault("search.folders", self.t("folders.missing", folder=missing[0]))
