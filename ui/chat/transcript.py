"""The transcript: one bubble per message in a QTextDocument, each bubble a frame changed on its own.

Why frames in one document: text stays selectable and copyable, Japanese shapes like any other text, and every
change touches one frame only. A streamed delta is one ``insertText`` at the end of its bubble and a highlight is
one ``setFrameFormat``; nothing re-renders the history, so a 2,000-message conversation streams as fast as a
new one. Bubbles are looked up by key (the message id, or a provisional key while a companion composes).

Provisional bubbles (what a companion is composing) stay below the final messages: a message that arrives is
inserted above them, so the order of final messages is the order they were published (and stored).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QShowEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrame,
    QTextFrameFormat,
    QTextImageFormat,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from ui.chat.bubble import HIGHLIGHT_BORDER, BubbleSnapshot, Header
from ui.roster.avatars import avatar_pixmap
from ui.roster.faces import FACES

KEY_PROPERTY: Final = QTextFormat.Property.UserProperty  # the bubble's key, kept in its frame format
SIDE_MARGIN: Final = 56  # the user's bubbles sit to the right, everyone else's to the left
PADDING: Final = 8  # inside a bubble's border; a highlighted bubble's thicker border takes from it (same size)
# The thin line between two bubbles holds a space. Qt's text layout works out which part of the view a change in
# a bubble (a frame) needs repainted from the lines around the frame, and an empty line counts for nothing there:
# with empty lines between them, every streamed piece and every highlight repainted the whole view.
SEPARATOR: Final = " "
OBJECT: Final = "\ufffc"  # how an inline image (a companion's face) stands in a block's text
FACE_SIZE: Final = 18  # the companion's face before its name in a bubble's header
MUTED_TEXT: Final = QColor("#8a8f98")  # readable on the light and the dark theme
_HeaderFormats = tuple[QTextCharFormat, QTextCharFormat, QTextCharFormat, QTextCharFormat]


FOLD_SCHEME: Final = "madoi-fold"  # the link of a bubble's folded part (what the camera saw): shows or hides it


@dataclass
class _Fold:
    """A quiet part at the end of a bubble, shown on click (e.g. what the camera saw, under the user's words)."""

    label: str
    detail: str
    open: bool = False


@dataclass
class _Bubble:
    frame: QTextFrame
    header: Header
    user: bool
    provisional: bool
    highlighted: bool = False
    fold: _Fold | None = None


class ChatTranscript(QTextBrowser):
    """A read-only, selectable transcript of bubbles, scrolled to the newest unless the reader scrolled up."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setUndoRedoEnabled(False)  # the undo stack would keep every streamed delta
        self.anchorClicked.connect(self._on_anchor)
        self._bubbles: dict[str, _Bubble] = {}
        self._frame_formats: dict[tuple[int, bool, bool, bool], QTextFrameFormat] = {}
        self._char_formats: dict[tuple[int, int], _HeaderFormats] = {}  # (name colour, text colour) -> formats
        self._body_formats: dict[tuple[bool, int], QTextCharFormat] = {}  # (provisional, text colour)
        self._faces: set[str] = set()  # the avatars added to the document as image resources
        self._provisional: list[str] = []  # keys, in display order (always at the bottom)
        self._follow = True
        self._note = ""  # shown above the first bubble
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        self._reset_document()

    # -- painting --------------------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._opaque_viewport()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.StyleChange:
            self._opaque_viewport()

    def _opaque_viewport(self) -> None:
        """A style sheet paints the transcript's background on the frame around the viewport and leaves the viewport
        transparent; Qt then repaints every bubble in view, and the frame under them, whenever the view scrolls (as
        it does with each new line). Filled with the same solid colour, the viewport is opaque: a scroll moves the
        pixels and paints the new line only."""
        viewport = self.viewport()
        brush = viewport.palette().brush(viewport.backgroundRole())
        if brush.style() == Qt.BrushStyle.SolidPattern and brush.color().alpha() == 255 \
                and not viewport.autoFillBackground():
            viewport.setAutoFillBackground(True)

    # -- queries ---------------------------------------------------------------------------------------------
    def has(self, key: str) -> bool:
        return key in self._bubbles

    def is_provisional(self, key: str) -> bool:
        bubble = self._bubbles.get(key)
        return bubble is not None and bubble.provisional

    def __len__(self) -> int:
        return len(self._bubbles)

    def bubbles(self) -> list[BubbleSnapshot]:
        """Every bubble as drawn, top to bottom."""
        out = []
        for frame in self.document().rootFrame().childFrames():
            fmt = frame.frameFormat()
            key = str(fmt.property(KEY_PROPERTY))
            first = self.document().findBlock(frame.firstPosition())
            lines: list[str] = []
            block = first.next()
            while block.isValid() and block.position() <= frame.lastPosition():
                lines.append(block.text())
                block = block.next()
            fragments = first.begin()
            while not fragments.atEnd() and fragments.fragment().charFormat().isImageFormat():
                fragments += 1  # the avatar, and the space after it
                fragments += 1
            fragment = fragments.fragment()
            name_color = fragment.charFormat().foreground().color().name() if fragment.isValid() else ""
            bubble = self._bubbles.get(key)
            header = first.text().removeprefix(OBJECT + " ")  # the avatar is an image, not text
            out.append(BubbleSnapshot(key, header, "\n".join(lines), name_color, fmt.background().color(),
                                      fmt.border(), bubble is not None and bubble.provisional))
        return out

    # -- changes ---------------------------------------------------------------------------------------------
    def clear_bubbles(self, note: str = "") -> None:
        """Empties the transcript; ``note`` is shown above the first bubble (e.g. that older ones are hidden)."""
        self._bubbles.clear()
        self._provisional.clear()
        self._reset_document(note)
        self._follow = True

    def add_bubble(self, key: str, header: Header, text: str, *, user: bool = False) -> None:
        """A final message, above the provisional bubbles."""
        position = self._insert_position()
        frame = self._insert(position, key, header, text, user=user, provisional=False)
        self._bubbles[key] = _Bubble(frame, header, user, provisional=False)

    def add_entry(self, key: str, text: str, link: str = "", *, after: str | None = None, icon: str = "",
                  icon_size: int = 14) -> None:
        """A small line in the conversation's flow that is nobody's message (e.g. "Akari looked through the
        camera"): after the bubble or line ``after`` ("": before all of them; None or one not shown: the newest,
        above the provisional bubbles); the whole line is a link to ``link`` when given (``anchorClicked``);
        ``icon`` names an image resource of the document to put first."""
        cursor = QTextCursor(self.document())
        if after == "" or (after is not None and after in self._bubbles):
            # The end of the line before: the first one (the note or a separator), or the separator after ``after``.
            before = self.document().begin() if after == "" \
                else self.document().findBlock(self._bubbles[after].frame.lastPosition() + 1)
            cursor.setPosition(before.position() + before.length() - 1)
        else:
            cursor.setPosition(self._insert_position())
        cursor.beginEditBlock()
        try:
            fmt = QTextFrameFormat()
            fmt.setPadding(2)
            fmt.setLeftMargin(PADDING)
            fmt.setProperty(KEY_PROPERTY, key)
            frame = cursor.insertFrame(fmt)
            line = QTextCharFormat()
            line.setForeground(MUTED_TEXT)
            line.setFontPointSize(max(1.0, self.font().pointSizeF() * 0.9))
            if link:
                line.setAnchor(True)
                line.setAnchorHref(link)
            if icon:
                image = QTextImageFormat()
                if link:
                    image.setAnchor(True)
                    image.setAnchorHref(link)
                image.setName(icon)
                image.setWidth(icon_size)
                image.setHeight(icon_size)
                image.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignMiddle)
                cursor.insertImage(image)
                cursor.insertText(" ", line)
            if link:
                line.setFontUnderline(True)
            cursor.insertText(text, line)
            following = QTextCursor(self.document())
            following.setPosition(frame.lastPosition() + 1)
            following.setBlockFormat(self._separator_format(False))
            self._set_line(following, SEPARATOR)
        finally:
            cursor.endEditBlock()
        self._bubbles[key] = _Bubble(frame, Header(text, MUTED_TEXT), False, provisional=False)

    def add_provisional(self, key: str, header: Header) -> None:
        """A bubble for something being composed; its text grows with :meth:`append_text`."""
        frame = self._insert(self._end_position(), key, header, "", user=False, provisional=True)
        self._bubbles[key] = _Bubble(frame, header, False, provisional=True)
        self._provisional.append(key)

    def append_text(self, key: str, text: str) -> None:
        """Adds streamed text at the end of ``key``'s bubble: one insertion, whatever the history's length."""
        bubble = self._bubbles[key]
        cursor = QTextCursor(self.document())
        cursor.setPosition(bubble.frame.lastPosition())
        cursor.insertText(text, self._body_format(bubble.provisional))

    def set_text(self, key: str, text: str) -> None:
        """Replaces the text of ``key``'s bubble (its header stays; a folded part goes)."""
        bubble = self._bubbles[key]
        frame = bubble.frame
        first = self.document().findBlock(frame.firstPosition())
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            cursor.setPosition(first.position() + first.length())  # the first line after the header
            cursor.setPosition(frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(text, self._body_format(bubble.provisional))
        finally:
            cursor.endEditBlock()
        bubble.fold = None  # (its folded part went with the text)

    def set_fold(self, key: str, label: str, detail: str) -> None:
        """Ends ``key``'s bubble with a folded part: ``label`` as a quiet link that shows ``detail`` under it (and
        hides it again) on click. A bubble has one; :meth:`set_text` takes it away."""
        bubble = self._bubbles[key]
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            cursor.setPosition(bubble.frame.lastPosition())
            cursor.insertBlock(QTextBlockFormat(), self._body_format(bubble.provisional))
            bubble.fold = _Fold(label, " ".join(detail.split()))
            self._write_fold(cursor, key, bubble.fold)
        finally:
            cursor.endEditBlock()

    def fold_open(self, key: str) -> bool | None:
        """Whether ``key``'s folded part is shown (None: it has none)."""
        bubble = self._bubbles.get(key)
        return None if bubble is None or bubble.fold is None else bubble.fold.open

    def toggle_fold(self, key: str) -> None:
        """Shows ``key``'s folded part, or hides it again."""
        bubble = self._bubbles.get(key)
        if bubble is None or bubble.fold is None:
            return
        last = self.document().findBlock(bubble.frame.lastPosition())
        label = last.previous() if bubble.fold.open else last
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            cursor.setPosition(label.position())
            cursor.setPosition(bubble.frame.lastPosition(), QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            bubble.fold.open = not bubble.fold.open
            self._write_fold(cursor, key, bubble.fold)
        finally:
            cursor.endEditBlock()

    def body_text(self, key: str) -> str:
        """The text of ``key``'s bubble under its header, without its folded part."""
        bubble = self._bubbles.get(key)
        if bubble is None:
            return ""
        frame = bubble.frame
        block = self.document().findBlock(frame.firstPosition()).next()
        lines: list[str] = []
        while block.isValid() and block.position() <= frame.lastPosition():
            lines.append(block.text())
            block = block.next()
        if bubble.fold is not None:
            lines = lines[:-2 if bubble.fold.open else -1]
        return "\n".join(lines)

    def _write_fold(self, cursor: QTextCursor, key: str, fold: _Fold) -> None:
        """The fold's link line (and its detail when open) at ``cursor`` (inside an edit block)."""
        link = QTextCharFormat()
        link.setForeground(MUTED_TEXT)
        link.setFontPointSize(max(1.0, self.font().pointSizeF() * 0.9))
        link.setAnchor(True)
        link.setAnchorHref(f"{FOLD_SCHEME}:{key}")
        link.setFontUnderline(True)
        cursor.insertText(f"{'▾' if fold.open else '▸'} {fold.label}", link)
        if fold.open:
            detail = QTextCharFormat()
            detail.setForeground(MUTED_TEXT)
            detail.setFontPointSize(max(1.0, self.font().pointSizeF() * 0.9))
            cursor.insertBlock(QTextBlockFormat(), detail)
            cursor.insertText(fold.detail, detail)

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == FOLD_SCHEME:
            self.toggle_fold(url.path())

    def header(self, key: str) -> Header | None:
        """The header ``key``'s bubble shows when not highlighted (None if there is no such bubble)."""
        bubble = self._bubbles.get(key)
        return bubble.header if bubble is not None else None

    def set_header(self, key: str, header: Header) -> None:
        bubble = self._bubbles[key]
        bubble.header = header
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()  # one layout pass for the whole header, not one per piece of it
        try:
            self._rewrite_header(cursor, bubble.frame, header)
        finally:
            cursor.endEditBlock()

    def remove(self, key: str) -> None:
        bubble = self._bubbles.pop(key, None)
        if bubble is None:
            return
        if key in self._provisional:
            self._provisional.remove(key)
        frame = bubble.frame
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        try:
            cursor.setPosition(frame.firstPosition() - 1)
            cursor.setPosition(frame.lastPosition() + 1, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            # The lines before and after the bubble are one line now: keep one line's text.
            block = cursor.block()
            self._set_line(cursor, self._note if block.position() == 0 and self._note else SEPARATOR)
        finally:
            cursor.endEditBlock()

    def set_highlighted(self, key: str, on: bool, status: str = "") -> bool:
        """Marks the bubble being spoken aloud (``status`` joins its header meanwhile); False if there is none."""
        bubble = self._bubbles.get(key)
        if bubble is None:
            return False
        bubble.highlighted = on
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()  # the border and the header change in one layout pass
        try:
            bubble.frame.setFrameFormat(self._frame_format(key, bubble.header.color, user=bubble.user,
                                                           provisional=bubble.provisional, highlighted=on))
            self._rewrite_header(cursor, bubble.frame, replace(bubble.header, status=status if on else ""))
        finally:
            cursor.endEditBlock()
        return True  # bubble.header stays the header to come back to

    def batch(self) -> QTextCursor:
        """A cursor whose ``beginEditBlock``/``endEditBlock`` bracket many changes into one layout pass."""
        return QTextCursor(self.document())

    # -- rendering -------------------------------------------------------------------------------------------
    def _reset_document(self, note: str = "") -> None:
        self._note = note
        self.document().clear()  # (its resources too: the faces are added again as bubbles come)
        self._faces.clear()
        self.document().setDocumentMargin(8)
        cursor = QTextCursor(self.document())
        cursor.setBlockFormat(self._separator_format(bool(note)))
        if note:
            fmt = QTextCharFormat()
            fmt.setForeground(MUTED_TEXT)
            fmt.setFontItalic(True)
            cursor.insertText(note, fmt)
        else:
            cursor.insertText(SEPARATOR, QTextCharFormat())

    @staticmethod
    def _set_line(cursor: QTextCursor, text: str) -> None:
        """Makes the text of the cursor's block ``text`` (what is already there in front of it stays as it is)."""
        block = cursor.block()
        present = block.text()
        if present == text:
            return
        keep = len(text) if present.startswith(text) else 0
        cursor.setPosition(block.position() + keep)
        cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        if keep < len(text):
            cursor.insertText(text[keep:], QTextCharFormat())
        else:
            cursor.removeSelectedText()

    def _end_position(self) -> int:
        return self.document().characterCount() - 1

    def _insert_position(self) -> int:
        if self._provisional:
            return self._bubbles[self._provisional[0]].frame.firstPosition() - 1
        return self._end_position()

    def _insert(self, position: int, key: str, header: Header, text: str, *, user: bool,
                provisional: bool) -> QTextFrame:
        cursor = QTextCursor(self.document())
        cursor.setPosition(position)
        cursor.beginEditBlock()  # the frame, its header, its text and the separator: one layout pass
        try:
            frame = cursor.insertFrame(self._frame_format(key, header.color, user=user, provisional=provisional,
                                                          highlighted=False))
            self._write_header(cursor, header)
            body = self._body_format(provisional)
            cursor.insertBlock(QTextBlockFormat(), body)
            if text:
                cursor.insertText(text, body)
            # The block after a frame separates it from the next one: keep it thin.
            after = QTextCursor(self.document())
            after.setPosition(frame.lastPosition() + 1)
            after.setBlockFormat(self._separator_format(False))
            self._set_line(after, SEPARATOR)
        finally:
            cursor.endEditBlock()
        return frame

    def _rewrite_header(self, cursor: QTextCursor, frame: QTextFrame, header: Header) -> None:
        """Replaces the header line of ``frame`` (call inside an edit block)."""
        block = self.document().findBlock(frame.firstPosition())
        cursor.setPosition(block.position())
        cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self._write_header(cursor, header)

    def _write_header(self, cursor: QTextCursor, header: Header) -> None:
        name, plain, muted, status = self._header_formats(header.color)
        if header.avatar:
            cursor.insertImage(self._face(header.avatar, header.name))
            cursor.insertText(" ", plain)
        cursor.insertText(header.name, name)
        if header.emotion:
            cursor.insertText(f"   {header.emotion}", plain)
        if header.recipients:
            cursor.insertText(f"   → {header.recipients}", muted)
        if header.time:
            cursor.insertText(f"   {header.time}", muted)
        if header.status:
            cursor.insertText(f"   {header.status}", status)
        if header.note:
            cursor.insertText(f"   {header.note}", status)

    def _face(self, companion_id: str, name: str) -> QTextImageFormat:
        """The companion's avatar (its picture, or its letter circle) as an image of the document, made once per
        face (a picture changed in the editor is a new resource: bubbles shown before keep theirs)."""
        url = f"avatar:{companion_id}/{FACES.revision}/{name}"
        if url not in self._faces:
            ratio = self.devicePixelRatioF()
            pixmap = avatar_pixmap(companion_id, name, FACE_SIZE, device_pixel_ratio=ratio)
            self.document().addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), pixmap.toImage())
            self._faces.add(url)
        face = QTextImageFormat()
        face.setName(url)
        face.setWidth(FACE_SIZE)
        face.setHeight(FACE_SIZE)
        face.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignMiddle)
        return face

    def _header_formats(self, color: QColor) -> _HeaderFormats:
        """The name's, the emotion's, the details' and the status's formats (kept: building them costs more
        than inserting the text; the theme's text colour is part of the key)."""
        text = self.palette().text().color().rgba()
        key = (color.rgba(), text)
        formats = self._char_formats.get(key)
        if formats is None:
            name = QTextCharFormat()
            name.setFontWeight(QFont.Weight.Bold)
            name.setForeground(color)
            plain = QTextCharFormat()
            plain.setForeground(self.palette().text())
            muted = QTextCharFormat()
            muted.setForeground(MUTED_TEXT)
            status = QTextCharFormat(muted)
            status.setFontItalic(True)
            formats = self._char_formats[key] = (name, plain, muted, status)
        return formats

    def _body_format(self, provisional: bool) -> QTextCharFormat:
        key = (provisional, self.palette().text().color().rgba())
        fmt = self._body_formats.get(key)
        if fmt is None:
            fmt = QTextCharFormat()
            if provisional:
                fmt.setForeground(MUTED_TEXT)
                fmt.setFontItalic(True)
            else:
                fmt.setForeground(self.palette().text())
            self._body_formats[key] = fmt
        return fmt

    def _frame_format(self, key: str, color: QColor, *, user: bool, provisional: bool,
                      highlighted: bool) -> QTextFrameFormat:
        style = (color.rgb(), user, provisional, highlighted)
        fmt = self._frame_formats.get(style)
        if fmt is None:  # building one costs more than inserting the frame (PySide conversions): keep them
            fmt = QTextFrameFormat()
            background = QColor(color)
            background.setAlpha(80 if highlighted else 14 if provisional else 30)
            fmt.setBackground(QBrush(background))
            edge = QColor(color)
            edge.setAlpha(255 if highlighted else 120)
            fmt.setBorderBrush(QBrush(edge))
            border = HIGHLIGHT_BORDER if highlighted else 1
            fmt.setBorder(border)
            fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Dashed if provisional
                               else QTextFrameFormat.BorderStyle.BorderStyle_Solid)
            # The text stays where it is and the bubble keeps its size: lighting one up while it is spoken moves
            # nothing below it (no scroll, no repaint of the whole view).
            fmt.setPadding(PADDING - (border - 1))
            fmt.setTopMargin(2)
            fmt.setBottomMargin(2)
            fmt.setLeftMargin(SIDE_MARGIN if user else 0)
            fmt.setRightMargin(0 if user else SIDE_MARGIN)
            self._frame_formats[style] = fmt
        fmt.setProperty(KEY_PROPERTY, key)  # the frame keeps a copy
        return fmt

    @staticmethod
    def _separator_format(tall: bool) -> QTextBlockFormat:
        fmt = QTextBlockFormat()
        if not tall:
            fmt.setLineHeight(4, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
        return fmt

    # -- following the newest message ------------------------------------------------------------------------
    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)

    def scroll_to_newest(self) -> None:
        self._follow = True
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
