"""The window's size, place and panel layout between runs (``window.ini`` beside the settings).

Qt's ``saveGeometry`` keeps, for a maximized window, the size it had before it was maximized (its normal
geometry), but Qt learns that size from the window manager's events, and many window managers (fluxbox and icewm,
seen under Xvfb) send the maximized size a moment before they say the window is maximized. Qt then took the
maximized size for the normal one: a window left maximized came back maximized, but un-maximizing it kept it as
large as the screen, not the size it was left at. So the normal geometry is kept here too, without the places and
sizes the window manager gave the window on its way to being maximized.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from PySide6.QtCore import QEvent, QObject, QRect, QSettings, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget

FIRST_SIZE: Final = QSize(1280, 800)
WM_STEP_S: Final = 0.5  # a window manager's steps towards maximizing come this close before it says so
_NOT_NORMAL: Final = (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen
                      | Qt.WindowState.WindowMinimized)


class WindowLayout(QObject):
    """Restores and saves ``window``'s geometry, the ``splitters``' sizes and ``tabs``' current tab."""

    def __init__(self, window: QMainWindow, store: Path, splitters: Mapping[str, QSplitter],
                 tabs: QTabWidget) -> None:
        super().__init__(window)
        self._window = window
        self._store = QSettings(str(store), QSettings.Format.IniFormat)
        self._splitters = dict(splitters)
        self._tabs = tabs
        self._normal: QRect | None = None  # the geometry before it was maximized, full screen or minimized
        self._recent: deque[tuple[float, QRect]] = deque(maxlen=16)  # its geometries since, newest last
        self._pending: Qt.WindowState | None = None  # maximized or full screen once the window is on screen
        window.installEventFilter(self)

    def normal_geometry(self) -> QRect:
        """The geometry the window has, or would have again once it is no longer maximized or full screen."""
        if not self._window.windowState() & _NOT_NORMAL:
            return self._window.geometry()
        return QRect(self._normal) if self._normal is not None else self._window.normalGeometry()

    # -- following the window ----------------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        handle = self._window.windowHandle()
        if watched is handle and kind == QEvent.Type.Expose and handle.isExposed() and self._pending is not None:
            handle.removeEventFilter(self)
            self._window.setWindowState(self._pending)
            self._pending = None
        if watched is self._window and kind in (QEvent.Type.Move, QEvent.Type.Resize):
            geometry = self._window.geometry()
            if self._window.isVisible() and not self._window.windowState() & _NOT_NORMAL and (
                    not self._recent or self._recent[-1][1] != geometry):
                self._recent.append((time.monotonic(), geometry))
        elif watched is self._window and kind == QEvent.Type.WindowStateChange:
            self._state_changed()
        return False

    def _state_changed(self) -> None:
        window = self._window
        now, geometry = time.monotonic(), window.geometry()
        if not window.windowState() & _NOT_NORMAL:  # back to normal: the window manager restored its geometry
            self._recent.clear()
            self._recent.append((now, geometry))
            return
        large = Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen
        if window.windowState() & large and _covers_screen(geometry):
            # Already screen-sized: the window manager's last steps (its place, then its size, or both) are not
            # the user's. A window manager that says "maximized" first leaves nothing here to drop.
            while self._recent and now - self._recent[-1][0] < WM_STEP_S and (
                    self._recent[-1][1].topLeft() == geometry.topLeft()
                    or self._recent[-1][1].size() == geometry.size()):
                self._recent.pop()
        if self._recent:
            self._normal = self._recent[-1][1]
        self._recent.clear()

    # -- between runs ------------------------------------------------------------------------------------------
    def restore(self) -> None:
        """Call before the window is shown. The first start: 1280x800, or the screen where it is smaller."""
        window = self._window
        geometry = self._store.value("geometry")
        if geometry is None or not window.restoreGeometry(geometry):
            screen = window.screen()
            room = screen.availableGeometry().size() if screen is not None else FIRST_SIZE
            window.resize(FIRST_SIZE.boundedTo(room).expandedTo(window.minimumSize()))
        elif window.windowState() & _NOT_NORMAL:
            self._restore_maximized()
        self._normal = self.normal_geometry()
        for key, splitter in self._splitters.items():
            state = self._store.value(key)
            if state is not None:
                splitter.restoreState(state)
        tab = self._store.value("sideTab")
        if tab is not None and str(tab).isdigit():
            self._tabs.setCurrentIndex(int(str(tab)))

    def _restore_maximized(self) -> None:
        """The window opens at its normal geometry and is maximized (or made full screen) once it is on screen.

        Mapped already maximized, as QWidget.restoreGeometry leaves it, icewm takes the maximized size for the
        normal one: un-maximizing it then did nothing. Maximized once mapped, every window manager tried keeps it.
        """
        window = self._window
        self._pending = window.windowState()
        normal = self._store.value("normalGeometry")
        if not isinstance(normal, QRect) or not _fits_a_screen(normal):
            normal = window.normalGeometry()
        window.setWindowState(Qt.WindowState.WindowNoState)
        window.setGeometry(normal)
        window.winId()  # the native window, to hear when it is exposed
        handle = window.windowHandle()
        if handle is not None:
            handle.installEventFilter(self)

    def save(self) -> None:
        """Call when the window closes: the window is not followed after (a filter left on a window being torn
        down at exit crashed the process)."""
        self._window.removeEventFilter(self)
        handle = self._window.windowHandle()
        if handle is not None:
            handle.removeEventFilter(self)
        self._store.setValue("geometry", self._window.saveGeometry())
        self._store.setValue("normalGeometry", self.normal_geometry())
        for key, splitter in self._splitters.items():
            self._store.setValue(key, splitter.saveState())
        self._store.setValue("sideTab", self._tabs.currentIndex())
        self._store.sync()


def _fits_a_screen(rect: QRect) -> bool:
    """Whether ``rect`` is on a screen there is now, and not larger than it (screens come and go between runs)."""
    screen = QGuiApplication.screenAt(rect.center())
    return screen is not None and rect.size().boundedTo(screen.availableGeometry().size()) == rect.size()


def _covers_screen(rect: QRect) -> bool:
    """Whether ``rect`` takes (nearly) all of its screen's room, as a maximized window does."""
    screen = QGuiApplication.screenAt(rect.center())
    if screen is None:
        return False
    room = screen.availableGeometry()
    return rect.width() >= room.width() * 0.9 and rect.height() >= room.height() * 0.9
