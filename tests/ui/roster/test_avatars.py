"""A companion's picture is its avatar in every panel (the roster's rows, the Turns panel's votes); without one,
its letter circle in its colour; a picture that cannot be read is the letter circle too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPixmap
from pytestqt.qtbot import QtBot

from ui.roster.avatars import avatar_pixmap
from ui.roster.colors import companion_color
from ui.roster.faces import FACES, Face
from ui.turns.votes import AVATAR_SIDE, VoteRow, VotesModel

GREEN = "#20a060"


@pytest.fixture
def picture(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "kumo.png"
    image = QImage(3000, 2000, QImage.Format.Format_RGB32)  # a big card picture: scaled once, cropped square
    image.fill(QColor(GREEN))
    assert image.save(str(path), "PNG")
    yield path
    FACES.update({})


def _centre(pixmap: QPixmap) -> str:
    """The colour inside the circle, beside where a letter would be."""
    image = pixmap.toImage()
    return image.pixelColor(4, image.height() // 2).name()


def test_a_picture_is_the_avatar_and_a_broken_one_is_the_letter_circle(qtbot: QtBot, picture: Path,
                                                                         tmp_path: Path) -> None:
    assert _centre(avatar_pixmap("kumo", "Kumo", 32)) == companion_color("kumo").name()
    revision = FACES.revision
    assert FACES.update({"kumo": Face(picture), "ame": Face(tmp_path / "missing.png", "#123456")})
    assert FACES.revision == revision + 1
    assert _centre(avatar_pixmap("kumo", "Kumo", 32)) == GREEN
    corner = avatar_pixmap("kumo", "Kumo", 32).toImage().pixelColor(0, 0)
    assert corner.alpha() == 0  # round: the corners stay transparent
    assert _centre(avatar_pixmap("ame", "Ame", 32)) != GREEN  # no picture: a letter circle, in its own colour
    assert companion_color("ame").name() == "#123456"
    assert not FACES.update({"kumo": Face(picture), "ame": Face(tmp_path / "missing.png", "#123456")})


def test_the_turns_panel_shows_each_voters_avatar(qtbot: QtBot, picture: Path) -> None:
    FACES.update({"kumo": Face(picture)})
    model = VotesModel()
    model.set_rows([VoteRow("kumo", "Kumo", "speak", "8", "", "", "", True),
                    VoteRow("akari", "Akari", "listen", "2", "", "", "", False)])
    kumo = model.data(model.index(0, 0), Qt.ItemDataRole.DecorationRole)
    akari = model.data(model.index(model.row_of("akari") or 0, 0), Qt.ItemDataRole.DecorationRole)
    assert _centre(kumo) == GREEN
    assert _centre(akari) == companion_color("akari").name()
    assert model.data(model.index(0, 1), Qt.ItemDataRole.DecorationRole) is None  # the name's cell only


def test_a_chat_bubble_starts_with_the_companions_face(qtbot: QtBot, picture: Path) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    from ui.chat.bubble import Header
    from ui.chat.transcript import ChatTranscript

    FACES.update({"kumo": Face(picture)})
    view = ChatTranscript()
    qtbot.addWidget(view)
    view.add_bubble("m1", Header("Kumo", QColor("#884422"), time="21:00", avatar="kumo"), "こんばんは")
    view.add_bubble("m2", Header("You", QColor("#556677")), "hi", user=True)
    kumo, mine = view.bubbles()
    assert (kumo.header, kumo.name_color, kumo.text) == ("Kumo   21:00", "#884422", "こんばんは")
    assert (mine.header, mine.name_color) == ("You", "#556677")
    block = view.document().findBlock(view.document().rootFrame().childFrames()[0].firstPosition())
    image_format = block.begin().fragment().charFormat().toImageFormat()
    assert image_format.isValid()
    face = view.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(image_format.name()))
    assert QPixmap.fromImage(face).toImage().pixelColor(6, face.height() // 2).name() == GREEN


def _glyph(pixmap: QPixmap) -> tuple[int, int, float]:
    """The white letters' bounding box (width, height) and the share of it they fill."""
    image = pixmap.toImage()
    white = [(x, y) for y in range(image.height()) for x in range(image.width())
             if QColor(image.pixel(x, y)).lightness() > 200 and QColor(image.pixel(x, y)).alpha() > 200]
    assert white
    xs, ys = [x for x, _ in white], [y for _, y in white]
    width, height = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    return width, height, len(white) / (width * height)


def test_a_kanji_initial_is_drawn_as_a_letter_in_the_turns_panels_16_px_circle(qapp: object) -> None:
    """颯 (Souta) at the Turns votes table's 16 px was a 6x7 block of white, filled to 98%: a box, not a letter."""
    width, height, filled = _glyph(avatar_pixmap("souta", "颯太", AVATAR_SIDE))
    assert height >= 9
    assert width >= 9
    assert filled < 0.85  # strokes with space between them
    _, latin_height, _ = _glyph(avatar_pixmap("akari", "Akari", AVATAR_SIDE))
    assert latin_height <= 7  # Latin initials keep their size
