"""The Turns panel's votes table on Qt's model/view: one row per companion present (or voting), its vote's cells.

:class:`VotesModel` (a ``QAbstractTableModel``) takes the rows the panel works out from each conversation view and
tells the view only what changed: a row's cells that differ (``dataChanged`` for those columns), rows that came or
went (``rowsInserted``/``rowsRemoved``), so Qt repaints only those. :class:`ImportanceDelegate` draws a vote's
importance as a bar in the companion's colour. Nothing here knows the bus or the conversation.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Changes:
    """What :meth:`VotesModel.set_rows` changed: the columns that show a text they never showed before (their width
    is measured again; texts repeat from turn to turn, so this soon stops), the rows of changed cells (their
    height), and ``rows_moved`` when rows came or went (everything is measured again)."""

    columns: frozenset[int]
    rows: frozenset[int]
    rows_moved: bool = False


class VotesModel(QAbstractTableModel):
    """The rows of the votes table; :meth:`set_rows` replaces them and signals only what changed.

    The view asks ``data`` for every role of every cell it paints or measures: the answers are worked out when the
    rows change (texts, colours, the speaker's bold font), not on every question."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[VoteRow] = []
        self._texts: list[tuple[str, ...]] = []
        self._headers: list[str] = list(COLUMNS)
        self._bold = QFont()
        self._bold.setBold(True)
        self._colors: dict[str, tuple[QColor, QColor]] = {}  # companion -> (its colour, the speaker's tint)
        self._seen: list[set[str]] = [set() for _ in COLUMNS]  # every text each column has shown (its width fits)

    def forget_widths(self) -> None:
        """The texts' widths no longer hold (another language or font): every column is measured again."""
        self._seen = [set() for _ in COLUMNS]

    @property
    def font(self) -> QFont:
        return self._bold

    @font.setter
    def font(self, font: QFont) -> None:
        """The table's font: the speaker's row is shown in it, bold."""
        self._bold = QFont(font)
        self._bold.setBold(True)

    def _color(self, companion: str) -> tuple[QColor, QColor]:
        colors = self._colors.get(companion)
        if colors is None:
            tint = QColor(companion_color(companion))
            tint.setAlpha(SPEAKER_TINT)
            colors = self._colors[companion] = (companion_color(companion), tint)
        return colors

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
            return self._texts[index.row()][column]
        if role == COMPANION_ROLE:
            return row.companion
        if role == IMPORTANCE_ROLE:
            return row.importance_value if column == IMPORTANCE else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.reason if column == REASON and row.reason else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._color(row.companion)[0] if column == 0 else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row.speaker else None
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._color(row.companion)[1] if row.speaker else None
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

    def set_rows(self, rows: list[VoteRow]) -> Changes:
        """Shows ``rows``; returns what changed (the panel fits those columns' widths and those rows' heights)."""
        columns: set[int] = set()
        changed_rows: set[int] = set()
        old = self._rows
        moved = len(rows) != len(old)
        if len(rows) < len(old):
            self.beginRemoveRows(QModelIndex(), len(rows), len(old) - 1)
            self._rows, self._texts = old[:len(rows)], self._texts[:len(rows)]
            self.endRemoveRows()
        for i, row in enumerate(rows[:len(self._rows)]):
            before = self._rows[i]
            if before == row and before.importance_value == row.importance_value:  # most rows stay as they are
                continue
            texts = row.texts()
            changed = range(len(COLUMNS)) if (before.companion, before.speaker) != (row.companion, row.speaker) \
                else [c for c, (a, b) in enumerate(zip(self._texts[i], texts, strict=True)) if a != b] + \
                ([IMPORTANCE] if before.importance_value != row.importance_value else [])
            self._rows[i], self._texts[i] = row, texts
            if changed:
                columns.update(c for c in changed if texts[c] not in self._seen[c])
                changed_rows.add(i)
                self.dataChanged.emit(self.index(i, min(changed)), self.index(i, max(changed)))
        if len(rows) > len(self._rows):
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, len(rows) - 1)
            self._rows = self._rows + rows[first:]
            self._texts = self._texts + [r.texts() for r in rows[first:]]
            self.endInsertRows()
            columns.update(range(len(COLUMNS)))
        for texts in self._texts:
            for column, text in enumerate(texts):
                self._seen[column].add(text)
        return Changes(frozenset(columns), frozenset(changed_rows), moved)


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


def fit_columns(table: QTableView, changes: Changes | None = None) -> None:
    """The changed columns as wide as their widest cell or their title (the last one, the reasons, takes the rest),
    then the changed rows as tall as their wrapped reasons; every row when a width changed or rows came or went
    (all columns and rows without ``changes``)."""
    last = len(COLUMNS) - 1
    widths = [table.columnWidth(c) for c in range(last)]
    for column in (changes.columns if changes is not None else range(len(COLUMNS))):
        if column < last:
            table.resizeColumnToContents(column)
    if changes is None or changes.rows_moved or widths != [table.columnWidth(c) for c in range(last)]:
        table.resizeRowsToContents()
    else:
        for row in changes.rows:
            table.resizeRowToContents(row)
