"""The camera panel's picture: the latest frame scaled into the panel (letterboxed), the "camera off" drawing and
its reason when there is no frame, the border flashing when a companion looks, and the "<name> looked" caption."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QWidget

FLASH_COLOR: Final = QColor("#ffb300")
BACKGROUND: Final = QColor("#1f2328")
FOREGROUND: Final = QColor("#d0d4da")
MUTED: Final = QColor("#8b929b")


class FrameView(QWidget):
    """Paints the latest frame scaled to fit (aspect kept, centred), or a headline and a detail when there is no
    frame, and the flash border and "who looked" caption over either."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(160, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.pixmap: QPixmap | None = None
        self.headline = ""
        self.detail = ""
        self.camera_off = False  # draws a crossed-out camera above the headline
        self.flash = 0.0  # 1.0: full highlight, 0.0: none
        self.caption = ""
        # The frame as drawn: scaled once per new frame or new size, not on every paint (the flash repaints about
        # 60 times a second while it fades, the frame stays the same meanwhile).
        self._scaled: QPixmap | None = None
        self._scaled_key: tuple[int, int, int, float] | None = None

    def frame_rect(self) -> QRect:
        """Where the frame is drawn: the largest rectangle of the frame's aspect that fits, centred."""
        if self.pixmap is None or self.pixmap.isNull():
            return QRect()
        size = self.pixmap.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
        return QRect((self.width() - size.width()) // 2, (self.height() - size.height()) // 2, size.width(),
                     size.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), BACKGROUND)
            if self.pixmap is not None and not self.pixmap.isNull():
                rect = self.frame_rect()
                painter.drawPixmap(rect.topLeft(), self._frame_at(rect, self.pixmap))
            else:
                self._scaled = self._scaled_key = None
                self._paint_message(painter)
            if self.flash > 0.0:
                color = QColor(FLASH_COLOR)
                color.setAlphaF(min(1.0, self.flash))
                width = 6
                painter.setPen(QPen(color, width))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(QRectF(self.rect()).adjusted(width / 2, width / 2, -width / 2, -width / 2))
            if self.caption:
                self._paint_caption(painter)
        finally:
            painter.end()

    def _frame_at(self, rect: QRect, pixmap: QPixmap) -> QPixmap:
        """``pixmap`` smoothly scaled to ``rect`` (in device pixels), kept until the frame or the size changes."""
        ratio = self.devicePixelRatioF()
        key = (pixmap.cacheKey(), rect.width(), rect.height(), ratio)
        if self._scaled is None or key != self._scaled_key:
            # Drawn with the painter's smooth transform (bilinear), as the frame always was: QPixmap.scaled's
            # smooth scaling costs more than twice as much.
            scaled = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
            scaled.setDevicePixelRatio(ratio)
            painter = QPainter(scaled)
            try:
                painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
                painter.drawPixmap(QRect(0, 0, rect.width(), rect.height()), pixmap)
            finally:
                painter.end()
            self._scaled, self._scaled_key = scaled, key
        return self._scaled

    def _paint_message(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        area = self.rect().adjusted(16, 16, -16, -16)
        top = area.center().y() - 40
        if self.camera_off:
            self._paint_camera_off(painter, area.center().x(), top - 24)
            top += 8
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        painter.setFont(font)
        painter.setPen(FOREGROUND)
        headline = QRect(area.left(), top, area.width(), 28)
        painter.drawText(headline, Qt.AlignmentFlag.AlignCenter, self.headline)
        painter.setFont(self.font())
        painter.setPen(MUTED)
        detail = QRect(area.left(), headline.bottom() + 4, area.width(), area.bottom() - headline.bottom() - 4)
        painter.drawText(detail, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
                         | int(Qt.TextFlag.TextWordWrap), self.detail)

    @staticmethod
    def _paint_camera_off(painter: QPainter, cx: int, cy: int) -> None:
        paint_camera(painter, cx, cy, MUTED, crossed=True)

    def _paint_caption(self, painter: QPainter) -> None:
        font = QFont(self.font())
        font.setBold(True)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        pad = 8
        width = min(self.width() - 24, metrics.horizontalAdvance(self.caption) + 2 * pad + 4)  # +4: rounding
        box = QRectF(12, self.height() - metrics.height() - 2 * pad - 12, width, metrics.height() + 2 * pad)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(0, 0, 0, 170))
        painter.drawRoundedRect(box, 6, 6)
        painter.setPen(FLASH_COLOR)
        painter.drawText(box.adjusted(pad, 0, -pad, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         metrics.elidedText(self.caption, Qt.TextElideMode.ElideRight, int(width - 2 * pad)))


def paint_camera(painter: QPainter, cx: float, cy: float, color: QColor, *, crossed: bool = False,
                 scale: float = 1.0, width: float = 2.5) -> None:
    """A video camera's outline centred near (``cx``, ``cy``), 52 x 40 at ``scale`` 1, crossed out if ``crossed``."""
    painter.save()
    painter.translate(cx, cy)
    painter.scale(scale, scale)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, width / scale))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(QRectF(-22, -14, 34, 28), 5, 5)
    painter.drawPolygon([QPointF(12, -6), QPointF(24, -13), QPointF(24, 13), QPointF(12, 6)])
    if crossed:
        painter.drawLine(QPointF(-26, -20), QPointF(26, 20))
    painter.restore()


def camera_icon(size: int, color: QColor, *, crossed: bool = False, dot: QColor | None = None) -> QPixmap:
    """A small camera glyph (the status bar's switch, the looks in the chat); ``dot``: a light in its corner."""
    ratio = 2.0  # drawn at twice the size: sharp on high-density screens too
    pixmap = QPixmap(round(size * ratio), round(size * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        scale = size / 56
        paint_camera(painter, size / 2 - 1 * scale, size / 2, color, crossed=crossed, scale=scale, width=1.6)
        if dot is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(dot)
            radius = size * 0.2
            painter.drawEllipse(QPointF(size - radius, radius), radius, radius)
    finally:
        painter.end()
    return pixmap
