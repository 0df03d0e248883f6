"""The Turns panel's votes table on Qt's model/view: one row per companion present (or voting), its vote's cells.

:class:`VotesModel` (a ``QAbstractTableModel``) takes the rows the panel works out from each conversation view and
tells the view only what changed: a row's cells that differ (``dataChanged`` for those columns), rows that came or
went (``rowsInserted``/``rowsRemoved``), so Qt repaints only those. :class:`ImportanceDelegate` draws a vote's
importance as a bar in the companion's colour. Nothing here knows the bus or the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QTableView

from ui.companion_colors import companion_color

COLUMNS: Final = ("companion", "vote", "importance", "selected", "closing", "reason")
COMPANION_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 1  # the companion id of a row's cells
IMPORTANCE_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 2  # the vote's importance (0-10), None without one
IMPORTANCE: Final = COLUMNS.index("importance")
REASON: Final = COLUMNS.index("reason")
SPEAKER_TINT: Final = 45  # the alpha of the speaker's row background in its companion's colour

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class VoteRow:
    """One row of the votes table as the user reads it (``companion`` is the id; ``name`` as shown, "▶ " before
    the speaker's)."""

    companion: str
    name: str
    vote: str
    importance: str
    selected: str
    closing: str
    reason: str
    speaker: bool  # marked as the one who takes the floor this turn
    importance_value: int | None = field(default=None, compare=False)  # the bar drawn behind the number

    def texts(self) -> tuple[str, ...]:
        return self.name, self.vote, self.importance, self.selected, self.closing, self.reason


class VotesModel(QAbstractTableModel):
    """The rows of the votes table; :meth:`set_rows` replaces them and signals only what changed."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[VoteRow] = []
        self._headers: list[str] = list(COLUMNS)
        self.font = QFont()

    # -- what the view asks --------------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row, column = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return row.texts()[column]
        if role == COMPANION_ROLE:
            return row.companion
        if role == IMPORTANCE_ROLE:
            return row.importance_value if column == IMPORTANCE else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.reason if column == REASON and row.reason else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return companion_color(row.companion) if column == 0 else None
        if role == Qt.ItemDataRole.FontRole:
            if not row.speaker:
                return None
            bold = QFont(self.font)
            bold.setBold(True)
            return bold
        if role == Qt.ItemDataRole.BackgroundRole:
            if not row.speaker:
                return None
            tint = QColor(companion_color(row.companion))
            tint.setAlpha(SPEAKER_TINT)
            return tint
        if role == Qt.ItemDataRole.TextAlignmentRole and column == IMPORTANCE:
            return Qt.AlignmentFlag.AlignCenter
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable if index.isValid() else Qt.ItemFlag.NoItemFlags

    # -- what the panel gives -----------------------------------------------------------------------------------
    def rows(self) -> list[VoteRow]:
        return list(self._rows)

    def row_of(self, companion: str) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.companion == companion), None)

    def set_headers(self, labels: list[str]) -> None:
        self._headers = labels
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)

    def set_rows(self, rows: list[VoteRow]) -> set[int]:
        """Shows ``rows``; returns the columns whose cells changed (the panel fits those columns' widths)."""
        changed: set[int] = set()
        old = self._rows
        if len(rows) < len(old):
            self.beginRemoveRows(QModelIndex(), len(rows), len(old) - 1)
            self._rows = old[:len(rows)]
            self.endRemoveRows()
            changed.update(range(len(COLUMNS)))
        for i, row in enumerate(rows[:len(self._rows)]):
            before = self._rows[i]
            if before == row and before.importance_value == row.importance_value:  # most rows stay as they are
                continue
            self._rows[i] = row
            columns = range(len(COLUMNS)) if (before.companion, before.speaker) != (row.companion, row.speaker) \
                else [c for c, (a, b) in enumerate(zip(before.texts(), row.texts(), strict=True)) if a != b] + \
                ([IMPORTANCE] if before.importance_value != row.importance_value else [])
            if columns:
                changed.update(columns)
                self.dataChanged.emit(self.index(i, min(columns)), self.index(i, max(columns)))
        if len(rows) > len(self._rows):
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, len(rows) - 1)
            self._rows = self._rows + rows[first:]
            self.endInsertRows()
            changed.update(range(len(COLUMNS)))
        return changed


class ImportanceDelegate(QStyledItemDelegate):
    """Draws the importance (0-10) as a bar in the companion's colour behind the number."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        value = index.data(IMPORTANCE_ROLE)
        if isinstance(value, int):
            rect = QRectF(option.rect).adjusted(3, 4, -3, -4)
            color = QColor(companion_color(str(index.data(COMPANION_ROLE))))
            color.setAlpha(90)
            painter.save()
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawRoundedRect(QRectF(rect.x(), rect.y(), rect.width() * value / 10, rect.height()), 3, 3)
            painter.restore()
        super().paint(painter, option, index)


def fit_columns(table: QTableView, columns: Iterable[int] = range(len(COLUMNS))) -> None:
    """Each of ``columns`` as wide as its widest cell or its title (the last one, the reasons, takes the rest);
    then the rows as tall as their wrapped reasons (a few rows; only when a cell changed)."""
    columns = list(columns)
    for column in columns:
        if column < len(COLUMNS) - 1:
            table.resizeColumnToContents(column)
    if columns:
        table.resizeRowsToContents()
