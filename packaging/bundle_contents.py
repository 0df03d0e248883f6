"""What the PyInstaller bundle leaves out: files PyInstaller's analysis collects that Madoi never loads.

PySide6's hooks collect every Qt plug-in of the modules in use, and each plug-in's libraries with it: the virtual
keyboard plug-in brings Qt Quick and QML (about 16 MB), the PDF image format brings Qt Pdf. Madoi uses QtCore,
QtGui, QtWidgets and QtSvg (widgets, no QML), loads no Qt translation, and runs on X11 or Wayland (xcb, wayland),
offscreen or minimal; OpenCV's own Qt 5 window plug-ins and fonts (``cv2/qt``) serve ``cv2.imshow``, which Madoi
never calls (its window is PySide6's). ``madoi.spec`` filters its analysis through :func:`left_out`, and shares
one OpenBLAS between OpenCV and faiss (:func:`shared_copies`);
tests/packaging checks that the bundle still starts, shows its window and searches without them.
"""

from __future__ import annotations

import posixpath
import re

# Qt libraries needed only by the plug-ins left out below.
_UNUSED_QT_LIBRARY = re.compile(
    r"^(lib)?Qt6(Quick|Qml|QmlModels|QmlMeta|QmlWorkerScript|VirtualKeyboard|VirtualKeyboardQml|Pdf"
    r"|EglFSDeviceIntegration|EglFsKmsSupport)(\.so(\.\d+)*|\.dll|\.dylib)?$"
)
# Plug-in folders of Qt for devices without a window system (evdev input, EGL full-screen).
_UNUSED_PLUGIN_FOLDERS = {"generic", "egldeviceintegrations"}
# Single plug-ins: full-screen and remote platforms, the QML virtual keyboard, PDF pages as images.
_UNUSED_PLUGINS = re.compile(
    r"^(lib)?(qeglfs|qlinuxfb|qvnc|qvkkhrdisplay|qminimalegl|qtvirtualkeyboardplugin|qpdf)\.(so|dll|dylib)$"
)


_QT_CATALOGUES_KEPT = frozenset({"qtbase_ja.qm"})  # a message box's standard buttons in Japanese


# OpenCV's and faiss's wheels each carry OpenBLAS (39 MB each, the same release: pthreads and OpenMP builds of one
# API). OpenCV gets a link to faiss's copy. That copy finds its Fortran and OpenMP runtimes beside the path it was
# loaded from ($ORIGIN: OpenCV's folder), so they are linked there too, in place of OpenCV's own.
_OPENCV_BLAS = re.compile(r"^opencv_python\.libs/libopenblasp?-r0-[0-9a-f]+\.(?P<version>[\d.]+)\.so$")
_FAISS_BLAS = re.compile(r"^faiss_cpu\.libs/libopenblas[op]?-r0-[0-9a-f]+\.(?P<version>[\d.]+)\.so$")
_FAISS_RUNTIME = re.compile(r"^faiss_cpu\.libs/(?P<name>lib(gfortran|quadmath|gomp)-[0-9a-f]+\.so[\d.]*)$")

Entry = tuple[str, str, str]  # PyInstaller's (where in the bundle, source, type)


def shared_copies(binaries: list[Entry]) -> list[Entry]:
    """``binaries`` with OpenCV's OpenBLAS replaced by a link to faiss's (when both are there, of one release)."""
    names = [dest.replace("\\", "/") for dest, _, _ in binaries]
    faiss = {m["version"]: name for name in names if (m := _FAISS_BLAS.match(name))}
    opencv = [(name, m["version"]) for name in names if (m := _OPENCV_BLAS.match(name))]
    if len(opencv) != 1 or opencv[0][1] not in faiss:
        return binaries
    links = {opencv[0][0]: faiss[opencv[0][1]]}
    links |= {f"opencv_python.libs/{m['name']}": name for name in names if (m := _FAISS_RUNTIME.match(name))}
    kept = [entry for entry, name in zip(binaries, names, strict=True) if name not in links]
    return kept + [(link, posixpath.relpath(target, posixpath.dirname(link)), "SYMLINK")
                   for link, target in links.items()]


def left_out(dest: str) -> bool:
    """Whether the bundle leaves out the file that PyInstaller would put at ``dest`` (relative to the bundle)."""
    parts = dest.replace("\\", "/").split("/")
    name = parts[-1]
    if parts[0] == "cv2" and len(parts) > 2 and parts[1] == "qt":
        return True
    if _UNUSED_QT_LIBRARY.match(name):  # in PySide6/Qt/lib, or PyInstaller's link to it at the top
        return True
    if parts[0] != "PySide6":
        return False
    if "translations" in parts[:-1]:  # Qt's own texts: only in the interface's languages (ui/window/i18n.py)
        return name not in _QT_CATALOGUES_KEPT
    if "plugins" in parts[:-1]:
        folder = parts[parts.index("plugins") + 1] if len(parts) > parts.index("plugins") + 2 else ""
        return folder in _UNUSED_PLUGIN_FOLDERS or bool(_UNUSED_PLUGINS.match(name))
    return False
