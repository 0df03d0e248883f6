"""Themes: the chosen style sheet reaches the application, "system" follows the platform, Japanese has a font."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from ui.window.theme import apply_theme, japanese_font_available, style_sheet, theme_manager, ui_font


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    yield qapp
    theme_manager(qapp).reset()  # other tests expect the plain look
    qapp.styleHints().unsetColorScheme()
    qapp.processEvents()  # deliver the scheme change now, while nothing else is being torn down


def test_light_and_dark_put_their_style_sheets_on_the_application(app: QApplication, qtbot: QtBot) -> None:
    label = QLabel("円居")
    qtbot.addWidget(label)
    assert apply_theme(app, "dark").scheme == "dark"
    assert app.styleSheet() == style_sheet("dark")
    label.ensurePolished()
    dark_text = label.palette().windowText().color().lightness()
    apply_theme(app, "light")
    assert app.styleSheet() == style_sheet("light")
    label.setStyleSheet("/* re-polish */")
    light_text = label.palette().windowText().color().lightness()
    assert dark_text > 180  # light ink on the dark theme
    assert light_text < 80  # dark ink on the light one


def test_system_follows_the_platform_scheme_and_its_changes(app: QApplication) -> None:
    hints = app.styleHints()
    hints.setColorScheme(Qt.ColorScheme.Dark)
    manager = apply_theme(app, "system")
    expected = "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"
    assert manager.scheme == expected
    hints.setColorScheme(Qt.ColorScheme.Light)
    if hints.colorScheme() == Qt.ColorScheme.Light:  # platforms that honour the request tell us the change
        assert theme_manager(app).scheme == "light"
        assert app.styleSheet() == style_sheet("light")


def test_an_explicit_choice_ignores_platform_changes(app: QApplication) -> None:
    apply_theme(app, "dark")
    app.styleHints().setColorScheme(Qt.ColorScheme.Light)
    assert theme_manager(app).scheme == "dark"


def test_japanese_text_renders_with_real_glyphs_not_tofu(app: QApplication) -> None:
    assert japanese_font_available(), "install fonts-noto-cjk (scripts/bootstrap.sh does)"
    font = ui_font(14)
    cjk = [f for f in font.families() if QFontDatabase.WritingSystem.Japanese in QFontDatabase.writingSystems(f)]
    assert cjk, font.families()
    metrics = QFontMetrics(font)
    # Distinct kanji must produce distinct pictures; tofu boxes would all look the same.
    images = []
    for char in "円居話":
        image = QImage(40, 40, QImage.Format.Format_Grayscale8)
        image.fill(255)
        painter = QPainter(image)
        painter.setFont(font)
        painter.drawText(4, 4 + metrics.ascent(), char)
        painter.end()
        images.append(bytes(image.constBits()))
    assert len(set(images)) == 3
    assert all(min(img) < 128 for img in images)  # something dark was drawn


class _StyleChanges(QObject):
    """Counts the style changes a widget is told of (each one re-polishes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StyleChange:
            self.count += 1
        return False


def test_saving_the_theme_in_force_leaves_every_widget_alone(app: QApplication, qtbot: QtBot) -> None:
    """Every Save applies the settings' theme; the one in force is not put on the application again (it polished
    every widget anew: the window held for over a second and the settings dialog stayed black meanwhile)."""
    label = QLabel("円居")
    qtbot.addWidget(label)
    label.show()
    apply_theme(app, "light")
    app.processEvents()
    changes = _StyleChanges()
    label.installEventFilter(changes)
    apply_theme(app, "light")
    app.processEvents()
    assert changes.count == 0
    apply_theme(app, "dark")
    app.processEvents()
    assert changes.count > 0
    assert app.styleSheet() == style_sheet("dark")
