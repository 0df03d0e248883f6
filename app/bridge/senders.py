"""Who a bridge client may speak as: the ``from`` of its messages and queries.

A client may use as ``from``: the app's user name, the identity of its ``hello`` (Madoi's clients), and one user
id of the reference's form ``user_<name>`` (``user_yamada``), which it claims by using it first. It can never
speak as a companion (or any id the app reserves), as a user id another connected client has claimed, or, once
it has claimed one, as a second user id.

Only the user's own client is the user (server.py: 127.0.0.1 or ::1 without ``Origin``, or the one presenting the
token). Any other that speaks as the user is published as itself (:func:`stranger_id`): a web page under its origin
(``http://localhost:5173``), another client under its address (``client:127.0.0.2``). Its words are then a source
of their own for the trust policy (companions/trust/sources.py): a turn they start uses the camera, the user's files
and past conversations only as the user allows that page, and, remembered or recalled later, they are its words,
never the user's. No client can take those ids: they hold ``/`` or the ``client:`` prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

from app.bridge.errors import ErrorCode, FrameRejected
from companions.trust.sources import CLIENT_PREFIX

# No "@": "<name>@<peer id>" is how a person on another machine is named on this bus (companions/network/people.py);
# a client claiming that form would be shown, and trusted, as that person.
USER_ID: Final = re.compile(r"^user_[A-Za-z0-9_.-]{1,64}$")


def stranger_id(origin: str | None, address: str) -> str:
    """The ``from`` under which the words of a client that is not the user's own, speaking as the user, are published:
    its web page's origin, or ``client:<address>``."""
    return origin or f"{CLIENT_PREFIX}{address}"


def is_stamped(sender: str) -> bool:
    """True for an id only the bridge gives (:func:`stranger_id`): no client may claim it."""
    return sender.startswith(CLIENT_PREFIX) or "/" in sender


class Senders:
    """The claimed user ids of the connected clients (by client key)."""

    def __init__(self, user_name: str, reserved_ids: Callable[[], Iterable[str]],
                 identities: Callable[[], Iterable[str]]) -> None:
        self._user_name = user_name
        self._reserved_ids = reserved_ids
        self._identities = identities  # the hello identities of the connected clients
        self._claims: dict[str, str] = {}  # client key -> its user id

    def claimed(self) -> set[str]:
        return set(self._claims.values())

    def claim_of(self, key: str) -> str | None:
        """The user id the client ``key`` claimed, if any."""
        return self._claims.get(key)

    def release(self, key: str) -> None:
        self._claims.pop(key, None)

    def check(self, key: str, identity: str | None, sender: str) -> None:
        """Allows ``sender`` for the client ``key`` (claiming it if it is its first user id), or raises.

        Raises:
            FrameRejected: forged ``from``.
        """
        if sender in (self._user_name, identity):
            return
        own = self._claims.get(key)
        if sender == own:
            return
        allowed = ", ".join(repr(s) for s in dict.fromkeys((self._user_name, identity, own)) if s)
        if own is not None:
            raise FrameRejected(ErrorCode.FORBIDDEN,
                                f"forged from {sender!r}: this client speaks as {allowed} (one user id each)")
        if not USER_ID.match(sender) or sender in set(self._reserved_ids()):
            raise FrameRejected(ErrorCode.FORBIDDEN, f"forged from {sender!r}: this client may send as {allowed},"
                                " or claim one user id of the form 'user_<name>'")
        if sender in self._claims.values() or sender in set(self._identities()):
            raise FrameRejected(ErrorCode.FORBIDDEN, f"forged from {sender!r}: another client speaks as it")
        self._claims[key] = sender
