"""Which web pages may use the bridge: a browser's handshake is admitted by its ``Origin`` header.

A browser sends ``Origin`` with every WebSocket handshake and lets any page connect anywhere, ``ws://127.0.0.1``
included: without this check, any page open in the user's browser could speak, answer and listen through Madoi. A
handshake with an ``Origin`` is therefore refused (HTTP 403) unless the origin is allowed by ``bridge.allowed_origins``
(app/settings/sections.py): by default the loopback origins a local avatar page is served from,
``http://localhost:*``, ``http://127.0.0.1:*`` and ``http://[::1]:*``. A client without ``Origin`` is not a browser
(a program on this machine, which could reach the app's files anyway) and is admitted as before; the token rule
(auth.py) applies to both.

A pattern is ``scheme://host[:port]``: ``port`` a number or ``*`` (any port); without a port, the scheme's default
port (80, 443) only. Hosts are compared exactly (``evil.localhost`` is not ``localhost``), case-insensitively.
``null`` (the origin of ``file:`` pages and sandboxed frames, which any site can create) is never allowed.

The first refusal of each origin is logged as a warning and published as :class:`BridgeOriginRefused` on the bus's
``events`` topic, so the window can say it once (ui/trust/refused_origins.py) and the user can allow the page in the
settings' Bridge tab.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from app.settings.sections import LOOPBACK_ORIGINS
from companions.wire.bus import LocalEvent

log = logging.getLogger(__name__)

DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_REMEMBERED_CAP: Final = 256  # refused origins remembered (a program can send any Origin it likes)


@dataclass(frozen=True)
class BridgeOriginRefused(LocalEvent):
    """A web page at ``origin`` tried to connect to the bridge and was refused (published once per origin)."""

    origin: str


@dataclass(frozen=True)
class OriginRule:
    scheme: str
    host: str
    port: int | None  # None: any port


def _split(origin: str, *, pattern: bool) -> OriginRule | None:
    text = origin.strip().lower()
    any_port = pattern and text.endswith(":*")
    if any_port:
        text = text[:-2]
    try:
        parts = urlsplit(text)
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number or out of range
        return None
    if (parts.scheme not in DEFAULT_PORTS or not host or parts.username is not None or parts.password is not None
            or parts.path not in ("", "/" if pattern else "") or parts.query or parts.fragment
            or (any_port and port is not None)):
        return None
    return OriginRule(parts.scheme, host, None if any_port else port or DEFAULT_PORTS[parts.scheme])


def rule_of(pattern: str) -> OriginRule:
    """The rule a pattern (``http://localhost:*``, ``https://avatar.example``) stands for.

    Raises:
        ValueError: not ``http(s)://host[:port|:*]``.
    """
    rule = _split(pattern, pattern=True)
    if rule is None:
        raise ValueError(f"{pattern!r} is not an origin: write scheme://host[:port], e.g. http://localhost:5173 "
                         "or http://localhost:* (any port)")
    return rule


class OriginPolicy:
    """Decides a handshake's ``Origin``; remembers what it refused (for the log and the window)."""

    def __init__(self, patterns: Iterable[str] = LOOPBACK_ORIGINS) -> None:
        self.rules = tuple(rule_of(p) for p in patterns)
        self.refused: collections.OrderedDict[str, int] = collections.OrderedDict()  # origin -> handshakes refused

    def allows(self, origin: str | None) -> bool:
        """True for a handshake without ``Origin`` (not a browser) or with an allowed one."""
        if origin is None:
            return True
        seen = _split(origin, pattern=False)
        return seen is not None and any(
            rule.scheme == seen.scheme and rule.host == seen.host and rule.port in (None, seen.port)
            for rule in self.rules)

    def refuse(self, origin: str) -> bool:
        """Counts a refused handshake from ``origin``; True the first time (then it is worth telling the user)."""
        shown = origin[:200]
        first = shown not in self.refused
        if first and len(self.refused) >= _REMEMBERED_CAP:
            self.refused.popitem(last=False)
        self.refused[shown] = self.refused.get(shown, 0) + 1
        if first:
            log.warning("bridge: refused a web page from %r: its origin is not in bridge.allowed_origins (allow it "
                        "in the settings' Bridge tab if you trust it)", shown)
        else:
            log.debug("bridge: refused %r again (%d times)", shown, self.refused[shown])
        return first
