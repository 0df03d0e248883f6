"""Reading what a peer sends: bytes become JSON only within bounds, and every refusal is counted by kind.

Everything a peer sends is hostile until it passed here and the checks of the link (companions/network/link.py).
:func:`read_json` never lets an error out except :class:`Refused`: ``json.loads(b"[" * 5000)`` raises
``RecursionError`` (not a ``ValueError``), and a lone surrogate (``"\\ud800"``) or nesting a few hundred levels
deep parses but then fails every serialization after it (the store, the bridge's relay). Both are refused here,
before any model sees them. :class:`Drops` counts what was refused, per kind, and logs a bounded number of lines:
a flood of garbage must not become a flood of log lines on the user's disk.
"""

from __future__ import annotations

import collections
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

MAX_DEPTH: Final = 16
"""Arrays and objects inside one another in one payload. The deepest item the protocol has is a vote array
(``[{"params": {...}}]``: 3) or a message whose metadata a client nests a little; 16 leaves room for an action's
parameters, while a few hundred levels already break serialization further on."""

DropKind: TypeAlias = Literal[
    "flood",        # over the rate of its peer or of all peers together
    "oversized",    # more bytes than MAX_PAYLOAD_BYTES (or a metadata stream longer than that)
    "not JSON",     # not UTF-8/16/32 JSON
    "too deep",     # nested deeper than MAX_DEPTH (RecursionError included)
    "bad text",     # a string that cannot be encoded again (a lone surrogate)
    "invalid",      # not a valid item of its topic (or not valid metadata)
    "query",        # a query or a query result: this process's devices answer only its own companions
    "forged",       # a `from` that belongs to another peer
    "reserved",     # a `from`, companion or vote as this app's user or companions, or in the form of a person elsewhere
    "not a companion",  # a vote or an action from an id its peer never announced or voted as (a person)
    "too many",     # past a bound: companions or people per peer, in all, or peers at once
    "stranger",     # signed by a peer this node is not connected to (relayed by another: any key can sign)
    "bad signature",  # a pubsub message without a signature, or one its signer (`from` of the RPC) did not make
    "transport",    # the libp2p layer refused it (a broken RPC, a stream error, a handler that failed)
    "slow",         # a stream that did not finish in time
]


class Refused(Exception):
    """A payload was refused; ``kind`` is what :class:`Drops` counts, ``str()`` says why."""

    def __init__(self, kind: DropKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: DropKind = kind


def read_json(payload: bytes, *, max_bytes: int) -> Any:
    """The JSON value of ``payload``, or :class:`Refused` (never any other error)."""
    if len(payload) > max_bytes:
        raise Refused("oversized", f"{len(payload)} bytes (limit {max_bytes})")
    try:
        data = json.loads(payload, parse_constant=_no_constant)
    except RecursionError:
        raise Refused("too deep", "nested beyond what the JSON reader can follow") from None
    except Exception as err:  # ValueError, UnicodeDecodeError, and anything else the reader may raise
        raise Refused("not JSON", f"{type(err).__name__}: {str(err)[:120]}") from None
    check_value(data)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN and Infinity: Python reads them, JSON has none


def check_value(data: Any) -> None:
    """Refuses a decoded value nested deeper than :data:`MAX_DEPTH` or holding text that cannot be encoded again."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value)
        elif isinstance(value, (list, dict)):
            if depth > MAX_DEPTH:
                raise Refused("too deep", f"nested more than {MAX_DEPTH} levels")
            if isinstance(value, dict):
                for key, item in value.items():
                    _check_text(key)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused("bad text", "a string with a lone surrogate") from None


LOG_EVERY_S: Final = 10.0  # one log line per peer and kind in this time; the rest are counted and said with the next


@dataclass
class Drops:
    """What was refused from the network, counted per kind; log lines are bounded per peer and kind."""

    logger: logging.Logger
    clock: Callable[[], float] = time.monotonic
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    _logged: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)  # -> (last line, unsaid)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def drop(self, kind: DropKind, peer: str, what: str, why: str) -> None:
        """Counts a refusal of ``what`` (a topic, ``metadata`` ...) from ``peer``; logs it unless one line for this
        peer and kind was logged less than :data:`LOG_EVERY_S` ago."""
        self.counts[kind] += 1
        now = self.clock()
        key = (peer, kind)
        last, unsaid = self._logged.get(key, (float("-inf"), 0))
        if now - last < LOG_EVERY_S:
            self._logged[key] = (last, unsaid + 1)
            return
        more = f" ({unsaid} more of this kind since the last line)" if unsaid else ""
        self.logger.warning("network: dropped a %s item from %s (%s): %s%s", what, peer, kind, why[:300], more)
        self._logged[key] = (now, 0)
        if len(self._logged) > 1024:  # peers come and go: the oldest lines' memory goes first
            self._logged.pop(next(iter(self._logged)))
