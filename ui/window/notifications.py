"""Non-modal notifications: toasts stacked down the right-hand side of a window, each with a close button and
perhaps one action ("Open the model settings…"), fading out after a few seconds; the last ones are kept in
:attr:`NotificationArea.history`.

Where they go: under the menu bar and under any tab bar or button at the top of the window's right-hand side (they
covered the side panel's tabs), never over the message box and its Send button (they covered them in the
bottom-right corner): the highest place where the whole stack covers no control (:func:`free_top`). Each toast is
as tall as its words need at the area's width: a wrapped text measured by its height for that width, not by the
one-line height its layout first asks for (then a toast overflowed onto the next one).

:meth:`NotificationArea.report_error` is the callback for ``app.runtime.error_reporting``: every uncaught error becomes
a toast (its traceback is already in the log file; the toast's tooltip shows the end of it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from PySide6.QtCore import QEvent, QObject, QPoint, QPropertyAnimation, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QTabBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.runtime.error_reporting import ErrorReport
from ui.window.naming import named

Level = Literal["info", "warning", "error"]
DEFAULT_TIMEOUT_MS = 8000
FADE_MS = 300
MARGIN = 12
WIDTH = 380


@dataclass(frozen=True)
class Notification:
    title: str
    text: str
    level: Level = "info"
    details: str = ""
    at: datetime = field(default_factory=datetime.now)
    action: str = ""  # the words of the toast's one button, if it has one


class Toast(QFrame):
    """One notification on screen."""

    finished = Signal(object)  # self, once: closed by the user or faded out

    def __init__(self, notification: Notification, timeout_ms: int, parent: QWidget | None = None, *,
                 act: Callable[[], object] | None = None) -> None:
        super().__init__(parent)
        self.notification = notification
        named(self, "notificationToast")
        self.setProperty("level", notification.level)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        title = named(QLabel(notification.title), "notificationTitle")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        text = named(QLabel(notification.text), "notificationText")
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = named(QToolButton(), "notificationClose")
        self.close_button.setText("×")
        self.close_button.setToolTip(self.tr("Dismiss"))
        self.close_button.setAccessibleName(self.tr("Dismiss notification"))
        self.close_button.clicked.connect(self.dismiss)
        head = QHBoxLayout()
        head.addWidget(title, 1)
        head.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 10)
        layout.addLayout(head)
        layout.addWidget(text)
        self.action_button: QPushButton | None = None
        if notification.action and act is not None:
            self.action_button = named(QPushButton(notification.action), "notificationAction")
            self.action_button.clicked.connect(act)
            self.action_button.clicked.connect(self.dismiss)
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(self.action_button)
            layout.addLayout(row)
        if notification.details:
            self.setToolTip("\n".join(notification.details.rstrip().splitlines()[-15:]))
        self._done = False
        self._paused = False
        self._effect = QGraphicsOpacityEffect(self)
        self._effect.setOpacity(1.0)
        self.setGraphicsEffect(self._effect)
        self._fade = QPropertyAnimation(self._effect, b"opacity", self)
        self._fade.setDuration(FADE_MS)
        self._fade.setStartValue(1.0)
        self._fade.setEndValue(0.0)
        self._fade.finished.connect(self.dismiss)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fade.start)
        if timeout_ms > 0:
            self._timer.start(timeout_ms)

    def dismiss(self) -> None:
        if self._done:
            return
        self._done = True
        self._timer.stop()
        self._fade.stop()
        self.finished.emit(self)

    def enterEvent(self, event: QEnterEvent) -> None:
        # Reading a toast holds it on screen; leaving restarts its countdown.
        if self._timer.isActive() or self._fade.state() == QPropertyAnimation.State.Running:
            self._fade.stop()
            self._effect.setOpacity(1.0)
            self._timer.stop()
            self._paused = True
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self._paused:
            self._paused = False
            self._timer.start(max(2000, self._timer.interval() // 2))
        super().leaveEvent(event)


class NotificationArea(QWidget):
    """Sits over ``host`` (usually the main window), in its top-right corner under the menu bar, above every other
    child."""

    shown = Signal(object)  # Notification
    dismissed = Signal(object)  # Notification

    def __init__(self, host: QWidget, *, timeout_ms: int = DEFAULT_TIMEOUT_MS, keep: int = 50,
                 max_visible: int = 4) -> None:
        super().__init__(host)
        named(self, "notificationArea")
        self.timeout_ms = timeout_ms
        self.max_visible = max_visible
        self.history: deque[Notification] = deque(maxlen=keep)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self._toasts: list[Toast] = []
        self.setFixedWidth(WIDTH)
        host.installEventFilter(self)
        self.hide()

    @property
    def visible_toasts(self) -> list[Toast]:
        return list(self._toasts)

    def notify(self, title: str, text: str, level: Level = "info", *, details: str = "",
               timeout_ms: int | None = None, action: tuple[str, Callable[[], object]] | None = None) -> Notification:
        """Shows a toast; ``action``: the words of a button on it and what it does (the toast closes then)."""
        notification = Notification(title=title, text=text, level=level, details=details,
                                    action=action[0] if action is not None else "")
        self.history.append(notification)
        toast = Toast(notification, self.timeout_ms if timeout_ms is None else timeout_ms, self,
                      act=action[1] if action is not None else None)
        toast.finished.connect(self._remove)
        self._toasts.append(toast)
        self._layout.addWidget(toast)
        while len(self._toasts) > self.max_visible:
            self._toasts[0].dismiss()  # the oldest makes room; it stays in the history
        self.show()
        toast.show()  # now, not when Qt gets round to it: the stack's height counts visible toasts only
        self._relayout()
        self.raise_()
        self.shown.emit(notification)
        return notification

    def report_error(self, report: ErrorReport) -> None:
        """The ``ErrorReporter`` callback."""
        text = report.summary + "\n" + self.tr("Madoi keeps running; details are in the log file.")
        self.notify(self.tr("Error in {where}").format(where=report.where), text, "error", details=report.traceback)

    def _remove(self, toast: Toast) -> None:
        if toast in self._toasts:
            self._toasts.remove(toast)
        self._layout.removeWidget(toast)
        toast.hide()
        toast.deleteLater()
        if not self._toasts:
            self.hide()
        self._relayout()
        self.dismissed.emit(toast.notification)

    def _relayout(self) -> None:
        host = self.parentWidget()
        if host is None:
            return
        # A wrapped text's height depends on the width: the layout's sizeHint is a one-line guess.
        layout = self._layout
        height = (layout.totalHeightForWidth(WIDTH) if layout.hasHeightForWidth() else layout.totalSizeHint().height()
                  ) if self._toasts else 0
        menu = host.menuWidget() if isinstance(host, QMainWindow) else None
        below_menu = (menu.geometry().bottom() + 1 if menu is not None and menu.isVisible() else 0) + MARGIN
        left = max(0, host.width() - WIDTH - MARGIN)
        controls = [_in(widget, host) for widget in host.findChildren(QWidget)
                    if _is_control(widget) and widget.isVisible() and not self.isAncestorOf(widget)]
        top = free_top(QRect(left, below_menu, WIDTH, height), controls, host.height())
        self.setGeometry(left, top, WIDTH, height)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parentWidget() and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._relayout()
        return super().eventFilter(watched, event)


_CONTROLS: tuple[type[QWidget], ...] = (QTabBar, QAbstractButton, QLineEdit, QPlainTextEdit, QComboBox,
                                        QAbstractSpinBox)


def _is_control(widget: QWidget) -> bool:
    """Whether a toast over ``widget`` would hide something the user clicks or types in (a tab, a button, a box);
    read-only text (the transcript, the turn's votes) may be covered for the seconds a toast shows."""
    if isinstance(widget, QPlainTextEdit):
        return not widget.isReadOnly()
    return isinstance(widget, _CONTROLS)


def _in(widget: QWidget, host: QWidget) -> QRect:
    return QRect(widget.mapTo(host, QPoint(0, 0)), widget.size())


def free_top(stack: QRect, controls: list[QRect], bottom: int) -> int:
    """The top for ``stack`` (its left, width and height fixed, its top the highest allowed) at which it covers none
    of ``controls``: its own top, else just under one of them, the highest that fits above ``bottom``. When no
    place is free (a small window, many toasts), under the controls at the top of the stack's column (the tab
    bars), so the tabs stay reachable."""
    column = [c for c in controls if c.left() <= stack.right() and c.right() >= stack.left()]
    tops = sorted({stack.top(), *(c.bottom() + 1 + MARGIN for c in column if c.bottom() + 1 + MARGIN > stack.top())})
    for top in tops:
        placed = QRect(stack.left(), top, stack.width(), stack.height())
        if placed.bottom() <= bottom and not any(placed.intersects(c) for c in column):
            return top
    covered = [c for c in column if c.intersects(QRect(stack.left(), stack.top(), stack.width(), 1))
               or c.top() < stack.top() + MARGIN * 4]
    return max([stack.top(), *(c.bottom() + 1 + MARGIN for c in covered)])
