"""Every look through the camera and everything noticing saw, shown in the chat's flow: who looked or what was
noticed, when, and the picture on click.

A look (``CameraLooked`` on the bus: a companion's ``vision`` query the camera answered, a picture the user showed
them with "Show them", or a look the camera switch refused) becomes a small line between the messages, not a bubble:
"Akari looked through the camera · 14:02". The line is a link; clicking it opens the picture with the time,
its size and the on-device description (:class:`LookPicture`). What noticing saw (``PresenceNoticed``, with
"let them notice you" on: app/devices/presence.py) is a line too, "The companions noticed you came back · 14:02",
with the frame that showed it on a click.

Pictures are kept for the last :data:`KEEP_PICTURES` looks only (the camera keeps none itself); an older line says
that its picture is no longer kept. The lines belong to the conversation they happened in and come back when the
chat shows it again (after a switch or a change of language): each one is put after the message it followed. They
last for the session; pictures are never written to disk.
"""

from __future__ import annotations

import collections
import datetime
import itertools
import logging
from dataclasses import dataclass
from typing import Final

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QImage, QPixmap, QTextDocument
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from companions.devices.ports import CameraLooked
from companions.devices.presence import PresenceNoticed
from ui.camera.frame import camera_icon
from ui.camera.texts import camera_text
from ui.chat.panel import ChatPanel
from ui.chat.transcript import KEY_PROPERTY, MUTED_TEXT
from ui.roster.display_names import DisplayNames
from ui.window.naming import named
from ui.window.panel_ports import People

log = logging.getLogger(__name__)

KEEP_PICTURES: Final = 30  # looks whose picture is kept (the newest); about 2 MB of JPEGs at 640x480
KEEP_LOOKS: Final = 500  # looks remembered at all (the lines of every conversation of the session)
LINK_SCHEME: Final = "madoi-look"
PICTURE_MAX: Final = (640, 480)
ICON: Final = "madoi-look-icon"  # the lines' camera glyph, a resource of the chat's document
ICON_REFUSED: Final = "madoi-look-refused-icon"


@dataclass
class _Look:
    key: str
    event: CameraLooked | PresenceNoticed
    conversation: int | None
    after: str  # the key of the message or line it followed in the chat ("": none, it came first)


class LookPicture(QDialog):
    """The picture of one look (or of what noticing saw), its time and size, and what the camera's description
    said."""

    def __init__(self, title: str, picture: QPixmap | None, details: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "lookPicture")
        self.setWindowTitle(title)
        self.image = named(QLabel(), "lookImage")
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        if picture is not None:
            self.image.setPixmap(picture)
        self.details = named(QLabel(details), "lookDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox()
        close = buttons.addButton(camera_text("picture.close"), QDialogButtonBox.ButtonRole.RejectRole)
        close.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.image, 1)
        layout.addWidget(self.details)
        layout.addWidget(buttons)


class ChatLooks(QObject):
    """The looks' lines in ``chat``. Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    entry_added = Signal(str)  # a line's key
    picture_opened = Signal(str)  # a line's key, once its picture (or that it is gone) is on screen

    def __init__(self, chat: ChatPanel, people: People) -> None:
        super().__init__(chat)
        self.chat = chat
        self.people = people
        self.names = DisplayNames(people)
        self.dialog: LookPicture | None = None
        self._looks: collections.OrderedDict[str, _Look] = collections.OrderedDict()
        self._pictures: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._numbers = itertools.count(1)
        self._icons: dict[str, QImage] = {}
        self._attached = False
        chat.history_loaded.connect(self._on_history_loaded)
        chat.view.anchorClicked.connect(self._on_link)

    def attach(self) -> None:
        """Shows the looks the chat hears of (in the order of its messages: the chat follows the bus)."""
        if not self._attached:
            self.chat.looked.connect(self._on_look)
            self._attached = True

    def detach(self) -> None:
        if self._attached:
            self.chat.looked.disconnect(self._on_look)
            self._attached = False

    # -- what is kept --------------------------------------------------------------------------------------------
    def keys(self) -> list[str]:
        """Every look remembered, oldest first."""
        return list(self._looks)

    def picture(self, key: str) -> bytes | None:
        """The JPEG of look ``key`` while it is kept."""
        return self._pictures.get(key)

    @property
    def pictures_kept(self) -> int:
        return len(self._pictures)

    # -- the bus and the chat --------------------------------------------------------------------------------
    def _on_look(self, item: object) -> None:
        if not isinstance(item, CameraLooked | PresenceNoticed):
            return
        try:
            key = f"{'look' if isinstance(item, CameraLooked) else 'notice'}-{next(self._numbers)}"
            look = _Look(key, item, self.chat.history.active_id(), self._newest())
            self._looks[key] = look
            while len(self._looks) > KEEP_LOOKS:
                self._looks.popitem(last=False)
            if item.jpeg:
                self._pictures[key] = item.jpeg
                while len(self._pictures) > KEEP_PICTURES:
                    self._pictures.popitem(last=False)
            self._add(look)
        except Exception:  # a slot never raises
            log.exception("chat: a look could not be shown")

    def _newest(self) -> str:
        """The key of the newest message or line in the chat ("" for none); provisional bubbles are no part of it."""
        view = self.chat.view
        for frame in reversed(view.document().rootFrame().childFrames()):
            key = frame.frameFormat().property(KEY_PROPERTY)
            if isinstance(key, str) and key and view.has(key) and not view.is_provisional(key):
                return key
        return ""

    def _on_history_loaded(self, conversation_id: int) -> None:
        """The chat shows a conversation again: its looks go back after the messages they followed."""
        try:
            for look in self._looks.values():
                if look.conversation == conversation_id and not self.chat.view.has(look.key):
                    self._add(look, after=look.after)
        except Exception:
            log.exception("chat: looks not shown again")

    def _add(self, look: _Look, *, after: str | None = None) -> None:
        event = look.event
        refused = isinstance(event, CameraLooked) and bool(event.refused)
        pictureless = isinstance(event, PresenceNoticed) and not event.jpeg  # (one not encoded): nothing to open
        link = "" if refused or pictureless else f"{LINK_SCHEME}:{look.key}"
        view = self.chat.view
        icon = ICON_REFUSED if refused else ICON
        view.document().addResource(QTextDocument.ResourceType.ImageResource, QUrl(icon), self._icon(icon))
        view.add_entry(look.key, self._line(event), link, after=after, icon=icon)
        self.entry_added.emit(look.key)

    def _icon(self, name: str) -> QImage:
        image = self._icons.get(name)
        if image is None:
            image = self._icons[name] = camera_icon(28, MUTED_TEXT, crossed=name == ICON_REFUSED).toImage()
        return image

    def _who(self, looker: str) -> str:
        return self.names.of(looker, in_sentence=True)

    def _line(self, event: CameraLooked | PresenceNoticed) -> str:
        time = datetime.datetime.fromtimestamp(event.at).strftime("%H:%M")
        if isinstance(event, PresenceNoticed):
            return camera_text(f"chat.noticed.{event.kind}", time=time)
        if event.refused:
            return camera_text("chat.refused", who=self._who(event.looker), time=time)
        if event.looker == self.people.user_id():
            return camera_text("chat.shown", time=time)
        return camera_text("chat.looked", who=self._who(event.looker), time=time)

    # -- the picture -----------------------------------------------------------------------------------------
    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == LINK_SCHEME:
            self.open_picture(url.path())

    def open_picture(self, key: str) -> LookPicture | None:
        """Shows look ``key``'s picture (one window at a time: a new one replaces the last)."""
        look = self._looks.get(key)
        if look is None:
            return None
        event = look.event
        time = datetime.datetime.fromtimestamp(event.at).strftime("%H:%M:%S")
        if isinstance(event, PresenceNoticed):
            title = camera_text("picture.noticed_title", time=time)
        elif event.looker == self.people.user_id():
            title = camera_text("picture.shown_title", time=time)
        else:
            title = camera_text("picture.title", who=self._who(event.looker), time=time)
        jpeg = self._pictures.get(key)
        pixmap: QPixmap | None = None
        details: list[str] = [self._line(event)] if isinstance(event, PresenceNoticed) else []  # what it showed
        if jpeg is not None:
            image = QImage()
            image.loadFromData(jpeg, "JPG")
            if not image.isNull():
                pixmap = QPixmap.fromImage(image)
                if pixmap.width() > PICTURE_MAX[0] or pixmap.height() > PICTURE_MAX[1]:
                    pixmap = pixmap.scaled(*PICTURE_MAX, Qt.AspectRatioMode.KeepAspectRatio,
                                           Qt.TransformationMode.SmoothTransformation)
            details.append(camera_text("picture.size", width=event.width, height=event.height))
        else:
            details.append(camera_text("picture.gone", n=KEEP_PICTURES))
        if isinstance(event, CameraLooked) and event.description:
            details.append(event.description)
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        dialog = LookPicture(title, pixmap, "\n".join(details), self.chat.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        dialog.show()
        self.dialog = dialog
        self.picture_opened.emit(key)
        return dialog
