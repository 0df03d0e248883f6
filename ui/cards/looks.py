"""How a companion looks in the companion editor: its colour (the palette's while its card names none of its own) and
its picture (a letter circle until one is chosen; the chosen one is saved with the card)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QColorDialog, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QPushButton, QWidget

from companions.cards.card import CompanionCard
from ui.cards.editor_texts import TEXTS
from ui.roster.avatars import avatar_pixmap
from ui.roster.colors import companion_color
from ui.window.naming import named

PREVIEW: Final = 96
PICTURE_FILTER: Final = "Pictures (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"


class CardLooks(QWidget):
    """The colour and picture rows. ``who`` says the id and name the letter circle is drawn for, as the form has
    them now; ``language`` is the one the rows' words are in."""

    def __init__(self, language: str, who: Callable[[], tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.language = language
        self._who = who
        self.colour_button = named(QPushButton(), "colourButton")
        self.colour_button.clicked.connect(self._choose_colour)
        self.preview = named(QLabel(), "picturePreview")
        self.preview.setFixedSize(PREVIEW, PREVIEW)
        choose = named(QPushButton(self._t("choose")), "choosePictureButton")
        choose.clicked.connect(self._choose_picture)
        picture_row = QHBoxLayout()
        picture_row.addWidget(self.preview)
        picture_row.addWidget(choose)
        picture_row.addStretch(1)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.addRow(self._t("colour"), self.colour_button)
        self.form.addRow(self._t("picture"), picture_row)
        self.picture: Path | None = None  # a picture chosen, not yet saved
        self.colour = "#7aa2f7"
        self._colour_chosen = False  # a card that names no colour of its own keeps the palette's

    def _t(self, key: str) -> str:
        return TEXTS.text(key, self.language)

    def show_card(self, card: CompanionCard | None) -> None:
        """The card's own colour, else the palette's for it (or for a new one); no picture chosen."""
        self.picture = None
        own = card is not None and "colour" in card.model_fields_set
        self._colour_chosen = own
        self.colour = card.colour if card is not None and own else companion_color(
            card.id if card is not None else "new").name()
        self._paint_colour()
        self._paint_preview()

    def set_colour(self, colour: str) -> None:
        """The companion's own colour from now on (its card names it when saved)."""
        self.colour = colour
        self._colour_chosen = True
        self._paint_colour()

    def set_picture(self, path: Path) -> None:
        self.picture = path
        self._paint_preview()

    def card_fields(self) -> dict[str, Any]:
        """What the card says of its looks: its colour, when one was chosen (the picture is saved beside it)."""
        return {"colour": self.colour} if self._colour_chosen else {}

    def _choose_colour(self) -> None:
        chosen = QColorDialog.getColor(QColor(self.colour), self, self._t("colour"))
        if chosen.isValid():
            self.set_colour(chosen.name())

    def _choose_picture(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self._t("picture"), str(Path.home()), PICTURE_FILTER)
        if path:
            self.set_picture(Path(path))

    def _paint_colour(self) -> None:
        self.colour_button.setText(self.colour)
        self.colour_button.setStyleSheet(f"background-color: {self.colour}; color: white;")

    def _paint_preview(self) -> None:
        if self.picture is not None:
            pixmap = QPixmap(str(self.picture))
            if not pixmap.isNull():
                self.preview.setPixmap(pixmap.scaled(PREVIEW, PREVIEW, Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.SmoothTransformation))
                return
        companion_id, name = self._who()
        self.preview.setPixmap(avatar_pixmap(companion_id, name, PREVIEW))
