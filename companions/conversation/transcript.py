"""The transcript: what the chat shows of the active conversation, as a Qt-free read model.

Fed the bus items of the ``messages`` and ``events`` topics in order (:meth:`Transcript.apply`), it keeps what a
person sees in the chat and answers each item with the changes a view makes (:data:`Change`):

- a ``Message`` is a line shown once (by id), replacing whatever its sender was composing: one bubble, never two;
- while conversation control lets a companion compose (``ConversationChanged``), a *composing* line says so
  ("composing", then "waiting" once composed while the previous speech still plays); the floor passing on, a
  cancelled or ended turn drops it;
- ``TextStreamed`` grows it: the line of a ``speak`` call (``kind="speech"``) replaces whatever plain text it
  showed (that text is never said) and a line written again replaces the first; plain text after a line is left
  out; a new request's plain text starts a new paragraph. Text of a turn whose message was shown is never shown;
- ``TurnEnded``: a turn that finished while conversation control still delivers it waits; any other end drops it;
- ``SpeakingChanged``: the speaker's latest line not yet voiced is the one being spoken.

:meth:`reset` starts afresh (the user opened another conversation); :meth:`stored` shows a stored line (no
speech follows for it). The chat (ui/chat/panel.py) draws the changes; tests read the model without Qt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from companions.companion.worker import TextStreamed, TurnEnded
from companions.conversation.readmodel import ConversationChanged
from companions.devices.ports import SpeakingChanged
from companions.devices.shown_look import shown_parts
from companions.wire.bus import BusItem
from companions.wire.protocol import Message

ComposingStatus: TypeAlias = Literal["composing", "waiting"]


@dataclass(frozen=True)
class LineShown:
    """A line said (``stored``: from the conversation's history); ``replaced`` are the composing lines it takes
    the place of. ``words`` are what the bubble shows, ``look`` what the camera saw, folded under them."""

    message: Message
    words: str
    look: str | None
    replaced: tuple[str, ...] = ()
    stored: bool = False


@dataclass(frozen=True)
class ComposingShown:
    """A composing line appeared (``new``) or its status changed."""

    key: str
    companion: str
    status: ComposingStatus
    new: bool


@dataclass(frozen=True)
class ComposingText:
    """A composing line's text grew (``replace``: its whole text is now ``text``)."""

    key: str
    text: str
    replace: bool


@dataclass(frozen=True)
class ComposingDropped:
    """A composing line that will never be said went."""

    key: str


@dataclass(frozen=True)
class SpeakingShown:
    """``message_id`` is being spoken aloud by ``companion`` (``speaking``), or no longer."""

    message_id: str
    companion: str
    speaking: bool


Change: TypeAlias = LineShown | ComposingShown | ComposingText | ComposingDropped | SpeakingShown


@dataclass
class _Composing:
    companion: str
    turn: str
    status: ComposingStatus
    line: bool | None = None  # None: plain text only; True: a line shows and grows; False: a line shows, finished
    paragraph: bool = False  # the request ended: the next plain text starts a new paragraph


class Transcript:
    """The chat's read model of the active conversation (``user_id``: whose lines are the user's)."""

    def __init__(self, user_id: Callable[[], str]) -> None:
        self._user_id = user_id
        self.shown: dict[str, Message] = {}  # the lines shown, by id, in order
        self.looks: dict[str, str] = {}  # line id -> what the camera saw at its end
        self.composing: dict[str, _Composing] = {}  # key -> a line being composed
        self.speaking: dict[str, str] = {}  # companion -> the line it is saying aloud now
        self._replaced: set[tuple[str, str]] = set()  # (companion, turn) whose line was shown
        self._unspoken: dict[str, str] = {}  # companion -> its latest line not voiced yet
        self._current: tuple[str | None, str] | None = None  # (speaker, turn) composing or waiting

    def reset(self) -> None:
        """Nothing shown: the user opened another conversation."""
        self.shown.clear()
        self.looks.clear()
        self.composing.clear()
        self.speaking.clear()
        self._replaced.clear()
        self._unspoken.clear()
        self._current = None

    def stored(self, message: Message) -> LineShown | None:
        """A line of the conversation's history (said long ago: never highlighted as spoken); None if shown."""
        change = self._line(message, stored=True)
        self._unspoken.pop(message.params.from_, None)
        return change

    def apply(self, item: BusItem) -> list[Change]:
        """The changes ``item`` makes to what the chat shows (none for an item it does not show)."""
        if isinstance(item, Message):
            line = self._line(item, stored=False)
            return [line] if line is not None else []
        if isinstance(item, TextStreamed):
            return self._streamed(item)
        if isinstance(item, TurnEnded):
            return self._turn_ended(item)
        if isinstance(item, ConversationChanged):
            return self._conversation(item)
        if isinstance(item, SpeakingChanged):
            return self._speaking(item)
        return []

    # -- lines -------------------------------------------------------------------------------------------------
    def _line(self, message: Message, *, stored: bool) -> LineShown | None:
        p = message.params
        if p.id in self.shown:
            return None
        self.shown[p.id] = message
        words, look = shown_parts(message)
        if look:
            self.looks[p.id] = look
        replaced: list[str] = []
        if p.from_ != self._user_id():
            for key in [k for k, c in self.composing.items() if c.companion == p.from_]:
                self._replaced.add((p.from_, self.composing.pop(key).turn))
                replaced.append(key)
            self._unspoken[p.from_] = p.id
        return LineShown(message, words, look or None, tuple(replaced), stored)

    def revised(self, message_id: str, look: str | None) -> None:
        """The user edited a line: what the camera saw is still folded under it (``look``), or no more."""
        if look:
            self.looks[message_id] = look
        else:
            self.looks.pop(message_id, None)

    # -- what companions compose -------------------------------------------------------------------------------
    def _conversation(self, event: ConversationChanged) -> list[Change]:
        turn = event.view.turn
        if turn is None:
            return []
        changes: list[Change] = []
        if turn.phase in ("composing", "waiting") and turn.speaker is not None \
                and (turn.speaker, turn.turn_id) not in self._replaced:  # (the view lags behind the message)
            for key, composing in list(self.composing.items()):
                if composing.turn == turn.turn_id and composing.companion != turn.speaker:  # the floor passed on
                    changes.append(self._drop(key))
            changes += self._composing(turn.speaker, turn.turn_id, "composing" if turn.phase == "composing"
                                       else "waiting")
        elif turn.phase in ("cancelled", "ended"):
            changes += [self._drop(key) for key, c in list(self.composing.items()) if c.turn == turn.turn_id]
        self._current = (turn.speaker, turn.turn_id) if turn.phase in ("composing", "waiting") else None
        return changes

    def _streamed(self, event: TextStreamed) -> list[Change]:
        if (event.companion_id, event.turn_id) in self._replaced:
            return []  # said already: more text in this turn is never spoken
        changes = self._composing(event.companion_id, event.turn_id, "composing")
        key = composing_key(event.companion_id, event.turn_id)
        composing = self.composing[key]
        if event.done:
            composing.paragraph = True
            if composing.line:
                composing.line = False  # the next line of this turn starts afresh
            return changes
        if not event.text:
            return changes
        if event.kind == "speech":
            if not composing.line:  # a new line: what was shown is not what will be said
                composing.line = True
                composing.paragraph = False
                return [*changes, ComposingText(key, event.text, replace=True)]
            return [*changes, ComposingText(key, event.text, replace=False)]
        if composing.line is not None:
            return changes  # plain text after the line is not said
        text = event.text
        if composing.paragraph:  # the next request of the same turn: a new paragraph
            composing.paragraph = False
            text = "\n" + text
        return [*changes, ComposingText(key, text, replace=False)]

    def _turn_ended(self, event: TurnEnded) -> list[Change]:
        key = composing_key(event.companion_id, event.turn_id)
        if key not in self.composing:
            return []
        if event.status == "finished" and self._current == (event.companion_id, event.turn_id):
            return self._composing(event.companion_id, event.turn_id, "waiting")  # conversation control delivers
        return [self._drop(key)]  # cancelled, failed, or nobody will deliver it: it was never said

    def _composing(self, companion: str, turn: str, status: ComposingStatus) -> list[Change]:
        key = composing_key(companion, turn)
        composing = self.composing.get(key)
        if composing is None:
            self.composing[key] = _Composing(companion, turn, status)
            return [ComposingShown(key, companion, status, new=True)]
        if composing.status == status:
            return []  # every streamed piece and most views: nothing to change
        composing.status = status
        return [ComposingShown(key, companion, status, new=False)]

    def _drop(self, key: str) -> ComposingDropped:
        self.composing.pop(key, None)
        return ComposingDropped(key)

    # -- speech --------------------------------------------------------------------------------------------------
    def _speaking(self, event: SpeakingChanged) -> list[Change]:
        companion = event.speaker_id
        if event.speaking:
            message_id = self._unspoken.pop(companion, None)
            if message_id is None or message_id not in self.shown:
                return []
            self.speaking[companion] = message_id
            return [SpeakingShown(message_id, companion, True)]
        message_id = self.speaking.pop(companion, None)
        return [SpeakingShown(message_id, companion, False)] if message_id is not None else []


def composing_key(companion: str, turn: str) -> str:
    """The key of ``companion``'s line composed in ``turn`` (never a message id)."""
    return f"~{companion}:{turn}"
