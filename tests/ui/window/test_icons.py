"""The app icon renders from its SVG at every size, with a transparent outside and a drawn inside."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from ui.window.icons import ICON_SIZES, app_icon, render_icon, write_png


def test_the_icon_has_every_size_and_a_transparent_rounded_corner(qapp: QApplication) -> None:
    icon = app_icon()
    assert not icon.isNull()
    assert sorted(s.width() for s in icon.availableSizes()) == sorted(ICON_SIZES)
    image = render_icon(64)
    assert image.pixelColor(0, 0).alpha() == 0  # rounded corner: the desktop shows through
    centre = image.pixelColor(32, 33)
    assert centre.alpha() == 255
    assert centre.lightness() > 150  # the warm light in the middle of the circle


def test_a_png_rendering_can_be_written_for_installers(qapp: QApplication, tmp_path: Path) -> None:
    path = write_png(48, tmp_path / "madoi-48.png")
    image = QImage(str(path))
    assert (image.width(), image.height()) == (48, 48)
