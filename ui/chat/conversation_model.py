"""The conversation list's model (Qt model/view): the stored conversations, newest first, the active one in bold.

:meth:`ConversationsModel.set_conversations` takes the store's listing and tells the view only what changed: a
conversation whose title, count or time changed, or the active one (``dataChanged`` for its row); the rows are
reset only when conversations came, went or changed their order.
"""

from __future__ import annotations

import datetime
import re
from typing import Final

from PySide6.QtCore import QAbstractListModel, QDate, QLocale, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from app.storage.database import ConversationInfo
from ui.chat.texts import chat_text
from ui.window.i18n import window_language

ID_ROLE: Final = int(Qt.ItemDataRole.UserRole)  # a row's conversation id
STORED_TITLE: Final = 40  # the store keeps the first 40 characters of the first message as the title
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def shown_title(title: str, cut_at: int = STORED_TITLE) -> str:
    """A title as the list shows it: whole when it is shorter than the store's cut, else ended with "…" at a word
    boundary ("… tonight…", never "… tonight. Wan"), or at a character boundary in Japanese (no spaces between
    words there)."""
    title = " ".join(title.split())
    if len(title) < cut_at:
        return title
    head = title[:cut_at]
    space = head.rfind(" ")
    if not _CJK.search(head[-1]) and space >= cut_at // 2:
        head = head[:space]  # the cut word goes: it was cut mid-word, or is the last of a longer text
    return head.rstrip(" ,.;:!?、。") + "…"

_Index = QModelIndex | QPersistentModelIndex


class ConversationsModel(QAbstractListModel):
    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self.font = QFont()
        self._rows: list[ConversationInfo] = []
        self._active: int | None = None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        info = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.label(info)
        if role == Qt.ItemDataRole.ToolTipRole:
            return info.title or chat_text("untitled")
        if role == ID_ROLE:
            return info.id
        if role == Qt.ItemDataRole.FontRole and info.id == self._active:
            bold = QFont(self.font)
            bold.setBold(True)
            return bold
        return None

    def label(self, info: ConversationInfo, now: datetime.datetime | None = None) -> str:
        title = shown_title(info.title) or chat_text("untitled")
        when = self.when(datetime.datetime.fromtimestamp(info.updated_at), now or datetime.datetime.now())
        return f"{title}\n{chat_text('summary', n=info.message_count, when=when)}"

    def when(self, at: datetime.datetime, now: datetime.datetime) -> str:
        """When a conversation was last added to, as a person says it: "today 21:05", "yesterday 21:05", or the
        date in the interface language's short form."""
        time = at.strftime("%H:%M")
        days = (now.date() - at.date()).days
        if days == 0:
            return chat_text("when.today", time=time)
        if days == 1:
            return chat_text("when.yesterday", time=time)
        locale = QLocale(QLocale.Language.Japanese if window_language() == "ja" else QLocale.Language.English)
        date = locale.toString(QDate(at.year, at.month, at.day), QLocale.FormatType.ShortFormat)
        return f"{date} {time}"

    def conversations(self) -> list[ConversationInfo]:
        return list(self._rows)

    def info(self, conversation_id: int) -> ConversationInfo | None:
        return next((c for c in self._rows if c.id == conversation_id), None)

    def row_of(self, conversation_id: int) -> int | None:
        return next((i for i, c in enumerate(self._rows) if c.id == conversation_id), None)

    def retranslate(self) -> None:
        """Every row says its words again (the list calls it on LanguageChange)."""
        if self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1))

    def set_conversations(self, conversations: list[ConversationInfo], active: int | None) -> None:
        before, was_active = self._rows, self._active
        self._active = active
        if [c.id for c in conversations] != [c.id for c in before]:
            self.beginResetModel()
            self._rows = list(conversations)
            self.endResetModel()
            return
        self._rows = list(conversations)
        for row, (old, new) in enumerate(zip(before, conversations, strict=True)):
            if old != new or (new.id in (active, was_active) and active != was_active):
                self.dataChanged.emit(self.index(row), self.index(row))
