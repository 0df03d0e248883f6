"""How a roster row looks: the avatar with a badge for the state, the name over the state in words, and, for a
companion that runs elsewhere, where (``on 12D3Ko…a1b2c3``, ``via bridge``) at the right of the state line."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ui.roster.avatars import avatar_pixmap
from ui.roster.model import PLACE_ROLE, REACHABLE_ROLE, STATE_ROLE, WORDS_ROLE, RosterState

AVATAR_SIZE: Final = 36
BADGE_COLORS: Final[dict[RosterState, str]] = {"speaking": "#2e9e5b", "thinking": "#d9822b", "muted": "#c0392b"}
PLACE_GAP: Final = 12  # pixels at least between the state's words and the place


def state_icon(companion_id: str, name: str, state: RosterState, size: int = AVATAR_SIZE, *,
               expression: str | None = None, device_pixel_ratio: float = 1.0) -> QIcon:
    """The avatar with a badge for the state (none while listening; greyed out when absent) and, while it speaks,
    the feeling of its line as a small face (``expression``: happy, sad or angry; none for neutral)."""
    pixmap = avatar_pixmap(companion_id, name, size, dimmed=state == "absent", device_pixel_ratio=device_pixel_ratio)
    badge = BADGE_COLORS.get(state)
    if badge is not None:
        _paint_badge(pixmap, size, state, QColor(badge))
    if expression in FACE_COLORS:
        paint_face(pixmap, size, expression)
    return QIcon(pixmap)


FACE_COLORS: Final = {"happy": "#f4b400", "sad": "#4f86c6", "angry": "#d9534f"}


def paint_face(pixmap: QPixmap, size: int, expression: str) -> None:
    """A small face at the avatar's top left: a smile (happy), a frown (sad), a frown under slanted brows (angry)."""
    r = size * 0.24
    cx, cy = r + 0.5, r + 0.5
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor("#ffffff"), max(1.0, size / 24)))
    painter.setBrush(QColor(FACE_COLORS[expression]))
    painter.drawEllipse(QRectF(cx - r, cy - r, 2 * r, 2 * r))
    ink = QPen(QColor("#1f2328"), max(1.0, size / 28))
    ink.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(ink)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    eye = r * 0.32
    for dx in (-eye, eye):
        painter.drawPoint(QPointF(cx + dx, cy - r * 0.18))
    mouth = QRectF(cx - r * 0.45, cy - r * 0.05, r * 0.9, r * 0.6)
    if expression == "happy":
        painter.drawArc(mouth, 200 * 16, 140 * 16)  # the lower arc: a smile
    else:
        painter.drawArc(mouth.translated(0, r * 0.3), 20 * 16, 140 * 16)  # the upper arc: a frown
    if expression == "angry":
        for sign in (-1, 1):
            painter.drawLine(QPointF(cx + sign * r * 0.55, cy - r * 0.55), QPointF(cx + sign * r * 0.12, cy - r * 0.35))
    painter.end()


def _paint_badge(pixmap: QPixmap, size: int, state: RosterState, color: QColor) -> None:
    r = size * 0.2
    cx, cy = size - r - 0.5, size - r - 0.5
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor("#ffffff"), max(1.0, size / 24)))
    painter.setBrush(color)
    painter.drawEllipse(QRectF(cx - r, cy - r, 2 * r, 2 * r))
    white = QColor("#ffffff")
    if state == "thinking":  # three dots
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        dot = r * 0.22
        for dx in (-0.5 * r, 0.0, 0.5 * r):
            painter.drawEllipse(QRectF(cx + dx - dot, cy - dot, 2 * dot, 2 * dot))
    elif state == "speaking":  # three bars, like a level meter
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        width = r * 0.22
        for dx, height in ((-0.45 * r, 0.5 * r), (0.0, 0.9 * r), (0.45 * r, 0.6 * r)):
            painter.drawRect(QRectF(cx + dx - width / 2, cy - height / 2, width, height))
    elif state == "muted":  # a bar across, like a no-entry sign
        painter.setPen(QPen(white, max(1.0, r * 0.3), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(cx - 0.5 * r, cy), QPointF(cx + 0.5 * r, cy))
    painter.end()


class RosterDelegate(QStyledItemDelegate):
    """Paints a row as the style paints an item (selection, focus, the avatar, the two lines), then the place of a
    companion from elsewhere, smaller, at the right of the state line: red when it cannot be reached."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        if index.data(STATE_ROLE) == "absent":
            opt.palette.setColor(QPalette.ColorRole.Text,
                                 opt.palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        style = opt.widget.style() if opt.widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        place = str(index.data(PLACE_ROLE) or "")
        if not place:
            return
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        font = opt.font
        words_width = opt.fontMetrics.horizontalAdvance(str(index.data(WORDS_ROLE) or ""))
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        painter.save()
        painter.setFont(font)
        metrics = painter.fontMetrics()
        line = QRect(text.left(), text.center().y(), text.width() - 8, text.bottom() - text.center().y())
        room = line.width() - words_width - PLACE_GAP
        if room > metrics.horizontalAdvance("…") * 3:
            shown = metrics.elidedText(place, Qt.TextElideMode.ElideRight, room)
            selected = bool(opt.state & QStyle.StateFlag.State_Selected)
            role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText
            color = opt.palette.color(role)
            if not index.data(REACHABLE_ROLE) and not selected:
                color = QColor("#c0392b")
            painter.setPen(color)
            painter.drawText(line, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), shown)
        painter.restore()
