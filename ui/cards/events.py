"""The companion editor's events (for those who want them): the card's conditions, each a CEL expression checked as
it is typed and the instruction it gives, in the language edited (a card keeps each instruction in several)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from companions.cards.card import CompanionCard, Localized, localized
from companions.cards.cel_runtime import cel
from ui.cards.editor_texts import TEXTS, with_text
from ui.window.naming import named


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


class CardEvents(QGroupBox):
    """The conditions, and a button that adds one; ``language`` is the one the words are in."""

    changed = Signal()  # an expression was typed, or a condition removed (the editor checks the form again)

    def __init__(self, language: str, parent: QWidget | None = None) -> None:
        super().__init__(TEXTS.text("events", language), parent)
        self.language = language
        self.rows: list[EventRow] = []
        self._column = QVBoxLayout()
        add = named(QPushButton(TEXTS.text("event.add", language)), "addEventButton")
        add.clicked.connect(self._add_clicked)
        layout = QVBoxLayout(self)
        layout.addLayout(self._column)
        layout.addWidget(add, 0, Qt.AlignmentFlag.AlignLeft)

    def show_card(self, card: CompanionCard | None, language: str) -> None:
        """The card's conditions, their instructions in ``language`` (none for a new companion)."""
        for row in self.rows:
            row.deleteLater()
        self.rows = []
        if card is not None:
            for condition in card.events.conditions:
                for step in condition.execute:
                    self.add(condition.expression, localized(step.instruction, language), step.tool,
                             step.instruction)

    def add(self, expression: str, instruction: str, tool: str | None, original: Localized = "") -> EventRow:
        row = EventRow(expression, instruction, tool, self.language, original)
        row.removed.connect(self._remove)
        row.expression.textChanged.connect(self._expression_changed)
        self.rows.append(row)
        self._column.addWidget(row)
        return row

    def valid(self) -> bool:
        """Whether every expression written is valid CEL (an empty one is left out of the card)."""
        return all(row.validate() or not row.expression.text().strip() for row in self.rows)

    def conditions(self, language: str) -> list[dict[str, Any]]:
        """The card's conditions as the form has them, each instruction in ``language`` ("-" when left empty)."""
        conditions: list[dict[str, Any]] = []
        for row in self.rows:
            expression = row.expression.text().strip()
            if expression:
                said = with_text(row.original, language, row.instruction.text().strip() or "-")
                conditions.append({"expression": expression, "execute": [{"instruction": said, "tool": row.tool}]})
        return conditions

    def _add_clicked(self) -> None:
        self.add("", "", "speak")

    def _expression_changed(self, _text: str) -> None:
        self.changed.emit()

    def _remove(self, row: EventRow) -> None:
        self.rows.remove(row)
        row.deleteLater()
        self.changed.emit()
