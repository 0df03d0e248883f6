"""The Turns panel's votes table on Qt's model/view: per companion present (or voting), a row of its vote's cells
and, under it, a row with its reason in words, across the whole table.

The reason used to be the last column: at 1024 px and in Japanese it was squeezed to "You're not res… to the me…"
or to one character a line, and pushed Closing out of sight. So a companion has two rows in the model: its cells
(name, vote with its importance, named, closing stage) and its reason (only the first column holds it; the panel
spans it over every column, and hides it while there is none). :func:`fit_columns` gives the columns their
contents' widths and, when the table is narrower than that, takes the difference from the widest (their cells
wrap), so that every column stays in sight.

:class:`VotesModel` (a ``QAbstractTableModel``) takes the rows the panel works out from each conversation view and
tells the view only what changed: a row's cells that differ (``dataChanged`` for those columns), rows that came or
went (``rowsInserted``/``rowsRemoved``), so Qt repaints only those. :class:`VotesDelegate` draws a vote's importance
as a bar in the companion's colour behind it, and indents the reasons. Nothing here knows the bus or the
conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPixmap, QResizeEvent
from PySide6.QtWidgets import QHeaderView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from ui.roster.avatars import avatar_pixmap
from ui.roster.colors import companion_color
from ui.roster.faces import FACES

COLUMNS: Final = ("companion", "vote", "selected", "closing")
COMPANION_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 1  # the companion id of a row's cells
IMPORTANCE_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 2  # the vote's importance (0-10), None without one
REASON_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 3  # True on a companion's reason row
VOTE: Final = COLUMNS.index("vote")  # shows the importance too ("speak · 8", a bar behind)
REASON_INDENT: Final = 18  # pixels: a reason sits under its companion's name, a little in
METER_ROOM: Final = 34  # pixels at the right of a vote for its importance meter
MIN_COLUMN: Final = 44  # pixels: a column narrowed to fit keeps at least this (its cells wrap)
AVATAR_SIDE: Final = 16  # the companion's picture beside its name
SPEAKER_MARK: Final = "▶ "  # before the speaker's name
SPEAKER_TINT: Final = 45  # the alpha of the speaker's row background in its companion's colour

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class VoteRow:
    """One companion's vote as the user reads it (``companion`` is the id; ``name`` as shown, "▶ " before the
    speaker's); the table shows it as two rows: its cells, and its reason under them."""

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
        """The cells of its first row, as shown: the vote with its importance ("speak · 8")."""
        vote = f"{self.vote} · {self.importance}" if self.importance else self.vote
        return self.name, vote, self.selected, self.closing


@dataclass(frozen=True)
class Changes:
    """What :meth:`VotesModel.set_rows` changed: the columns that show a text they never showed before (their width
    is measured again; texts repeat from turn to turn, so this soon stops), the table's rows of changed cells or
    reasons (their height), and ``rows_moved`` when rows came or went (everything is measured again)."""

    columns: frozenset[int]
    rows: frozenset[int]
    rows_moved: bool = False


class VotesModel(QAbstractTableModel):
    """The rows of the votes table; :meth:`set_rows` replaces them and signals only what changed.

    The view asks ``data`` for every role of every cell it paints or measures: the answers are worked out when the
    rows change (texts, colours, the speaker's bold font), not on every question."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[VoteRow] = []  # one per companion: the table shows rows 2i (cells) and 2i + 1 (reason)
        self._texts: list[tuple[str, ...]] = []
        self._headers: list[str] = list(COLUMNS)
        self._bold = QFont()
        self._bold.setBold(True)
        self._colors: dict[str, tuple[QColor, QColor]] = {}  # companion -> (its colour, the speaker's tint)
        self._avatars: dict[tuple[str, str, int], QPixmap] = {}
        # Every text each column has shown, and whether bold (the speaker's row): its width fits. A vote said in a
        # plain row and then in the speaker's bold one is wider there ("話したい · 6" wrapped).
        self._seen: list[set[tuple[str, bool]]] = [set() for _ in COLUMNS]

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

    def _avatar(self, companion: str, name: str) -> QPixmap:
        """The companion's picture (or letter circle) beside its name, painted once per face."""
        key = (companion, name, FACES.revision)
        avatar = self._avatars.get(key)
        if avatar is None:
            avatar = self._avatars[key] = avatar_pixmap(companion, name, AVATAR_SIDE)
        return avatar

    def _color(self, companion: str) -> tuple[QColor, QColor]:
        colors = self._colors.get(companion)
        if colors is None:
            tint = QColor(companion_color(companion))
            tint.setAlpha(SPEAKER_TINT)
            colors = self._colors[companion] = (companion_color(companion), tint)
        return colors

    # -- what the view asks --------------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else 2 * len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= 2 * len(self._rows):
            return None
        number, reason_row = divmod(index.row(), 2)
        row, column = self._rows[number], index.column()
        if role == COMPANION_ROLE:
            return row.companion
        if reason_row:
            return self._reason_data(row, column, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._texts[number][column]
        if role == IMPORTANCE_ROLE:
            return row.importance_value if column == VOTE else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.reason or None
        if role == Qt.ItemDataRole.DecorationRole:
            # the name without the speaker's "▶ ": the letter circle's letter comes from it
            return self._avatar(row.companion, row.name.removeprefix(SPEAKER_MARK)) if column == 0 else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._color(row.companion)[0] if column == 0 else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row.speaker else None
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._color(row.companion)[1] if row.speaker else None
        return None

    def _reason_data(self, row: VoteRow, column: int, role: int) -> object:
        if role == REASON_ROLE:
            return True
        if role == Qt.ItemDataRole.DisplayRole:
            return row.reason if column == 0 else ""
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._color(row.companion)[1] if row.speaker else None
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if index.row() % 2:  # a reason: read, not chosen (the row above it is)
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- what the panel gives -----------------------------------------------------------------------------------
    def rows(self) -> list[VoteRow]:
        return list(self._rows)

    def row_of(self, companion: str) -> int | None:
        """The table row of ``companion``'s cells (its reason is the next one)."""
        return next((2 * i for i, r in enumerate(self._rows) if r.companion == companion), None)

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
            self.beginRemoveRows(QModelIndex(), 2 * len(rows), 2 * len(old) - 1)
            self._rows, self._texts = old[:len(rows)], self._texts[:len(rows)]
            self.endRemoveRows()
        for i, row in enumerate(rows[:len(self._rows)]):
            before = self._rows[i]
            if before == row and before.importance_value == row.importance_value:  # most rows stay as they are
                continue
            texts = row.texts()
            changed = range(len(COLUMNS)) if (before.companion, before.speaker) != (row.companion, row.speaker) \
                else [c for c, (a, b) in enumerate(zip(self._texts[i], texts, strict=True)) if a != b] + \
                ([VOTE] if before.importance_value != row.importance_value else [])
            self._rows[i], self._texts[i] = row, texts
            if changed:
                columns.update(c for c in changed if (texts[c], row.speaker) not in self._seen[c])
                changed_rows.add(2 * i)
                self.dataChanged.emit(self.index(2 * i, min(changed)), self.index(2 * i, max(changed)))
            if (before.reason, before.speaker) != (row.reason, row.speaker):
                changed_rows.add(2 * i + 1)
                self.dataChanged.emit(self.index(2 * i + 1, 0), self.index(2 * i + 1, len(COLUMNS) - 1))
        if len(rows) > len(self._rows):
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), 2 * first, 2 * len(rows) - 1)
            self._rows = self._rows + rows[first:]
            self._texts = self._texts + [r.texts() for r in rows[first:]]
            self.endInsertRows()
            columns.update(range(len(COLUMNS)))
        for row, texts in zip(self._rows, self._texts, strict=True):
            for column, text in enumerate(texts):
                self._seen[column].add((text, row.speaker))
        return Changes(frozenset(columns), frozenset(changed_rows), moved)


class VotesDelegate(QStyledItemDelegate):
    """Draws the importance (0-10) as a small meter in the companion's colour at the right of the vote (behind the
    words, or under them, it read as a highlight or a link), and a reason a little in from the left, wrapped over
    the whole table's width (its row spans every column)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        value = index.data(IMPORTANCE_ROLE)
        reason = bool(index.data(REASON_ROLE))
        whole = QStyleOptionViewItem(option)
        self.initStyleOption(whole, index)
        style = whole.widget.style() if whole.widget is not None else None
        if style is None or (not reason and not isinstance(value, int)):
            super().paint(painter, option, index)
            return
        # The cell's background (the speaker's tint) and selection under all of it, once; then the words in their
        # part of it (a reason a little in, a vote beside its meter) without a second coat of the tint.
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, whole, painter, whole.widget)
        words = QStyleOptionViewItem(whole)
        words.rect = option.rect.adjusted(REASON_INDENT, 0, 0, 0) if reason \
            else option.rect.adjusted(0, 0, -METER_ROOM, 0)
        words.backgroundBrush = QBrush()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, words, painter, whole.widget)
        if reason or not isinstance(value, int):
            return
        meter = QRectF(option.rect.right() - METER_ROOM + 4, option.rect.center().y() - 2, METER_ROOM - 10, 4)
        color = QColor(companion_color(str(index.data(COMPANION_ROLE))))
        track = QColor(color)
        track.setAlpha(45)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        painter.drawRoundedRect(meter, 2, 2)
        painter.setBrush(color)
        painter.drawRoundedRect(QRectF(meter.x(), meter.y(), meter.width() * value / 10, meter.height()), 2, 2)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        if not index.data(REASON_ROLE):
            if not isinstance(index.data(IMPORTANCE_ROLE), int):
                return super().sizeHint(option, index)
            words = QStyleOptionViewItem(option)  # the words wrap beside the meter
            if option.rect.width() > METER_ROOM:
                words.rect = option.rect.adjusted(0, 0, -METER_ROOM, 0)
            size = super().sizeHint(words, index)
            return QSize(size.width() + METER_ROOM, size.height())
        # The table asks with the width of the whole span: the reason's height wrapped there; no width of its own
        # (the first column must not grow to a whole reason's length).
        opt = QStyleOptionViewItem(option)
        opt.rect = option.rect.adjusted(REASON_INDENT, 0, 0, 0)
        return QSize(0, super().sizeHint(opt, index).height())


class VotesTable(QTableView):
    """The votes table: its columns fit its width again whenever it is resized (see :func:`fit_columns`)."""

    def __init__(self) -> None:
        super().__init__()
        self.natural: list[int] = [0] * len(COLUMNS)  # each column's contents' width, as last measured
        self.setItemDelegate(VotesDelegate(self))
        self.setWordWrap(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # every column in sight
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # set by fit_columns
        self.horizontalHeader().setMinimumSectionSize(MIN_COLUMN)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if _apply_widths(self) or event.size().width() != event.oldSize().width():
            self.resizeRowsToContents()  # the cells and the reasons wrap anew

    def show_reasons(self) -> list[int]:
        """Each reason row spans the table and shows only while its companion has a reason; the rows that came
        into sight (their height is measured then: a hidden row's is not)."""
        model = self.model()
        shown = []
        for row in range(1, model.rowCount(), 2):
            if self.columnSpan(row, 0) != len(COLUMNS):
                self.setSpan(row, 0, 1, len(COLUMNS))
            hidden = not model.index(row, 0).data()
            if self.isRowHidden(row) != hidden:
                self.setRowHidden(row, hidden)
                if not hidden:
                    shown.append(row)
        return shown


def fitted(natural: list[int], available: int) -> list[int]:
    """Column widths for ``available`` pixels: the contents' widths, the last column taking what is left over; when
    they do not fit, the widest are narrowed to one width (never below :data:`MIN_COLUMN`) until they do."""
    if sum(natural) <= available:
        return [*natural[:-1], available - sum(natural[:-1])]
    low, high = MIN_COLUMN, max(natural)
    while low < high:  # the largest cap at which the capped widths still fit
        cap = (low + high + 1) // 2
        if sum(min(w, cap) for w in natural) <= available:
            low = cap
        else:
            high = cap - 1
    return [min(w, low) for w in natural]


def _apply_widths(table: VotesTable) -> bool:
    """Sets the columns' widths for the table's width now; whether any changed."""
    header = table.horizontalHeader()
    changed = False
    for column, width in enumerate(fitted(table.natural, table.viewport().width())):
        if header.sectionSize(column) != width:
            header.resizeSection(column, width)
            changed = True
    return changed


def fit_columns(table: VotesTable, changes: Changes | None = None) -> None:
    """The changed columns measured again (their widest cell or their title), the widths fitted to the table (see
    :func:`fitted`), then the changed rows as tall as their wrapped cells and reasons; every row when a width
    changed or rows came or went (all columns and rows without ``changes``)."""
    shown = table.show_reasons() if changes is None or changes.rows_moved or any(r % 2 for r in changes.rows) \
        else []  # a reason came or went
    header = table.horizontalHeader()
    for column in (changes.columns if changes is not None else range(len(COLUMNS))):
        table.natural[column] = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
    if _apply_widths(table) or changes is None or changes.rows_moved:
        table.resizeRowsToContents()
    else:
        for row in sorted({*changes.rows, *shown}):
            table.resizeRowToContents(row)
