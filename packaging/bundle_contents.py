"""What the PyInstaller bundle leaves out: files PyInstaller's analysis collects that Madoi never loads.

PySide6's hooks collect every Qt plug-in of the modules in use, and each plug-in's libraries with it: the virtual
keyboard plug-in brings Qt Quick and QML (about 16 MB), the PDF image format brings Qt Pdf. Madoi uses QtCore,
QtGui, QtWidgets and QtSvg (widgets, no QML), loads no Qt translation, and runs on X11 or Wayland (xcb, wayland),
offscreen or minimal; OpenCV's own Qt 5 window plug-ins and fonts (``cv2/qt``) serve ``cv2.imshow``, which Madoi
never calls (its window is PySide6's). ``madoi.spec`` filters its analysis through :func:`left_out`;
tests/packaging checks that the bundle still starts, shows its window and searches without them.
"""

from __future__ import annotations

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
