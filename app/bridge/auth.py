"""Who may connect, as whom, and answering what: the token rule, the ``hello`` frame, allowed identities.

* Binding to anything but a loopback address needs a token; when a token is configured every client must present
  it, either in the handshake (``Authorization: Bearer <token>``) or in a first ``hello`` frame.
* A client may instead give the token in its URL (``ws://host:port/?token=...``): a browser cannot set headers.
* The optional first frame ``{"topic": "hello", "body": {"token"?, "id"?, "answers"?, "companions"?, "dialect"?,
  "stream"?, "turns"?, "metadata"?}}`` authenticates, names the client's own identity ``id`` (which it may then use as
  ``from``, besides the user's name), lists the query types it answers before the app does (``answers``; for
  the queries of ``companions`` only, if given), picks its dialect (dialects.py; ``"madoi"`` by default: a
  client that sends a hello knows Madoi), and asks for the streamed text of companions' lines (``"stream":
  true``, streams.py) and the turns' phases (``"turns": true``, turn_frames.py), and announces the companion it
  speaks for (``metadata``, guests.py). The bridge replies ``{"topic": "hello", "body": {"ok": true, ...}}``
  (with ``"stream": true`` / ``"turns": true`` when asked, ``"companion": <id>`` when its companion joined).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.bridge.errors import ErrorCode, FrameRejected

HELLO_TOPIC = "hello"


class BridgeConfigError(ValueError):
    """The bridge settings are unsafe or invalid; the bridge refuses to start."""


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name or wildcard may resolve to anything: treat it as public


def check_bind(host: str, token: str | None) -> None:
    """Raises :class:`BridgeConfigError` when listening on ``host`` without a token would be unsafe."""
    if not is_loopback(host) and not token:
        raise BridgeConfigError(
            f"the bridge refuses to listen on {host!r} without a token: set bridge.token "
            "(MADOI_BRIDGE_TOKEN) or bind to 127.0.0.1")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, if that is what it is."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def token_matches(presented: str | None, expected: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), expected.encode())


# No "@": it names people on other machines ("<name>@<peer id>", companions/network/people.py).
Identity = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
QueryType = Annotated[str, Field(min_length=1, max_length=64)]


class Hello(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    token: str | None = Field(default=None, max_length=4096)
    id: Identity | None = None
    answers: list[QueryType] = Field(default_factory=list, max_length=32)
    companions: list[Identity] | None = Field(default=None, max_length=64)  # answers for these companions only
    dialect: Literal["madoi", "reference", "legacy"] = "madoi"
    stream: bool = False
    turns: bool = False
    metadata: dict[str, Any] | None = None  # the companion it speaks for (guests.py)


def hello_of(data: Any) -> Hello | None:
    """The :class:`Hello` in a decoded frame, ``None`` if the frame is not a hello.

    Raises:
        FrameRejected: a hello frame with an invalid body.
    """
    if not isinstance(data, dict) or data.get("topic") != HELLO_TOPIC:
        return None
    try:
        return Hello.model_validate(data.get("body"))
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"invalid hello: {where}: {first['msg']}") from None


def welcome_frame(identity: str | None, answers: list[str], *, stream: bool = False, turns: bool = False,
                  companion: str | None = None) -> str:
    body: dict[str, Any] = {"ok": True, "id": identity, "answers": answers}
    if companion is not None:
        body["companion"] = companion
    if stream:
        body["stream"] = True
    if turns:
        body["turns"] = True
    return json.dumps({"topic": HELLO_TOPIC, "body": body})
