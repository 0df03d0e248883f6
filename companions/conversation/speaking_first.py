"""Speaking first: a turn that nobody's message opened, on an occasion the app noticed.

The companions answer messages; on an :class:`Occasion` they may also speak first: the user came back to the desk
(noticed through the camera, app/devices/presence.py), someone joined them, the light went out, or the user has been
quiet a while. The app decides *whether to ask* (the user's settings, :class:`FirstWordRules`: a cooldown, a cap
per hour, never while the user types or speaks, never in a conversation already under way); the companions' vote
decides *whether anyone speaks and who* (``ConversationManager.speak_first``; on the user's arrival or return,
someone greets even when every vote says listen: :data:`GREETED`): the turn opens on a cue, a short
stage direction in the conversation's language (:func:`cue`), which is said to the companions only. It is not
published: the chat, the stored conversation and the network never see it; the Turns panel says why the turn
opened (``TurnView.occasion``). One line answers an occasion; then the companions wait for the user.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from companions.trust.policy import NOTICED
from companions.wire.bus import LocalEvent

OccasionKind: TypeAlias = Literal[
    "arrived",  # someone came in front of the camera
    "returned",  # the user came back after a while away (``minutes``)
    "second_person",  # a second person joined the user
    "held_up",  # the user holds something up to the camera
    "dark",  # the light went out
    "silence",  # the user has been quiet for ``minutes``
]
OCCASION_KINDS: Final[tuple[OccasionKind, ...]] = ("arrived", "returned", "second_person", "held_up", "dark", "silence")
# Occasions a person greets on: when every companion votes to listen, the likely speaker greets all the same (as the
# user's message is always answered); on the others, nobody speaking is the vote's answer.
GREETED: Final[frozenset[OccasionKind]] = frozenset({"arrived", "returned"})

# The ``from`` of the cue that opens a turn on an occasion: no participant and not the user, so the turn is nobody's
# answer (a vote where everyone listens leaves it unanswered), the cue is never taken for the user's words, and a tool
# that reaches the user's things in that turn is asked for first (companions/trust/policy.py).
CUE_SENDER: Final = NOTICED.id

HOUR_S: Final = 3600.0


@dataclass(frozen=True)
class Occasion:
    """Why a turn opened without a message: ``kind``, when (``at``, wall-clock seconds) and, for ``returned`` and
    ``silence``, how many whole minutes the user was away or quiet."""

    kind: OccasionKind
    at: float
    minutes: int = 0


_CUES: Final[dict[str, dict[OccasionKind, str]]] = {
    "ja": {
        "arrived": "（カメラで気づいたこと：ユーザーが机の前に来た）",
        "returned": "（カメラで気づいたこと：ユーザーが{minutes}分ぶりに戻ってきた）",
        "second_person": "（カメラで気づいたこと：ユーザーのそばにもう一人いる）",
        "held_up": "（カメラで気づいたこと：ユーザーが何かをカメラの前に持ち上げている）",
        "dark": "（カメラで気づいたこと：部屋の明かりが消えた）",
        "silence": "（ユーザーは{minutes}分ほど何も言っていない）",
    },
    "en": {
        "arrived": "(Noticed through the camera: the user sat down at the desk.)",
        "returned": "(Noticed through the camera: the user came back after {minutes} minutes.)",
        "second_person": "(Noticed through the camera: someone else is with the user.)",
        "held_up": "(Noticed through the camera: the user is holding something up to the camera.)",
        "dark": "(Noticed through the camera: the light in the room went out.)",
        "silence": "(The user has not said anything for {minutes} minutes.)",
    },
}


def cue(occasion: Occasion, language: str) -> str:
    """What the companions are told of ``occasion``, in ``language`` (English for a language without words here)."""
    words = _CUES.get(language, _CUES["en"])[occasion.kind]
    return words.format(minutes=max(1, occasion.minutes))


@dataclass(frozen=True)
class FirstWordLimits:
    """How often the companions may speak first: not within ``cooldown_s`` of the last time, at most ``per_hour``
    times in any hour, and not within ``quiet_s`` of the conversation's last message (it is under way)."""

    cooldown_s: float = 300.0
    per_hour: int = 4
    quiet_s: float = 60.0


class FirstWordRules:
    """Whether the app may ask the companions to speak first now: :meth:`refusal` says why not (or ``None``),
    :meth:`spoke` counts a turn opened on an occasion. Times are wall-clock seconds; not thread-safe."""

    def __init__(self, limits: FirstWordLimits | None = None) -> None:
        self.limits = limits or FirstWordLimits()
        self._opened: collections.deque[float] = collections.deque()

    def refusal(self, now: float, *, user_active: bool, under_way: bool, last_message_at: float | None) -> str | None:
        """Why the companions may not speak first at ``now`` (words for the log), or ``None`` when they may.
        ``user_active``: the user is typing or speaking; ``under_way``: a turn runs or someone speaks aloud."""
        limits = self.limits
        while self._opened and now - self._opened[0] >= HOUR_S:
            self._opened.popleft()
        if user_active:
            return "the user is typing or speaking"
        if under_way:
            return "a conversation is under way"
        if last_message_at is not None and now - last_message_at < limits.quiet_s:
            return f"the conversation's last message was {now - last_message_at:.0f} s ago"
        if self._opened and now - self._opened[-1] < limits.cooldown_s:
            return f"they spoke first {now - self._opened[-1]:.0f} s ago (cooldown {limits.cooldown_s:.0f} s)"
        if len(self._opened) >= limits.per_hour:
            return f"they spoke first {len(self._opened)} times within the hour (cap {limits.per_hour})"
        return None

    def spoke(self, now: float) -> None:
        self._opened.append(now)


@dataclass(frozen=True)
class UserTyping(LocalEvent):
    """Published on the ``events`` topic by the window while the user writes in the message box (at most once
    every :data:`TYPING_EVERY_S`): the companions never speak first over it."""

    at: float  # wall-clock seconds


TYPING_EVERY_S: Final = 1.0
