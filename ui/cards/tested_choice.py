"""A row of the companion editor that chooses from a list (the model, the voice) with a test under it and what came
of it, as the settings' Companions tab has them."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QPushButton, QWidget

from ui.settings.form import button_row
from ui.window.naming import named


class TestedChoice(QWidget):
    """``label`` before the list (``names``: the Qt object names of the list, the test button and the result)."""

    def __init__(self, label: str, test: str, names: tuple[str, str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = named(QComboBox(), names[0])
        self.test_button = named(QPushButton(test), names[1])
        self.result = named(QLabel(), names[2])
        self.result.setWordWrap(True)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.addRow(label, self.combo)
        self.form.addRow("", button_row(self.test_button, self.result))
