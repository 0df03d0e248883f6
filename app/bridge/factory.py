"""Builds the bridge from the settings: the one function the assembly calls."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.bridge.dialects import Dialect
from app.bridge.server import BridgeServer
from app.settings import Settings
from companions.bus import Bus
from companions.query_broker import QueryBroker


def build_bridge(bus: Bus, broker: QueryBroker, settings: Settings, *,
                 reserved_ids: Callable[[], Iterable[str]] = frozenset) -> BridgeServer | None:
    """The bridge for ``settings.bridge``, or ``None`` when it is turned off (port 0).

    ``reserved_ids`` returns the identities no client may claim in its hello (the companions' ids).

    Raises:
        BridgeConfigError: the host is not a loopback address and no token is set.
    """
    section = settings.bridge
    if not section.enabled:
        return None
    token = section.token.get_secret_value() if section.token is not None else None
    return BridgeServer(
        bus, broker,
        host=section.host, port=section.port, token=token,
        user_name=settings.general.user_name, reserved_ids=reserved_ids,
        max_frame_bytes=section.max_frame_bytes, max_frames_per_second=section.max_frames_per_second,
        dialect=Dialect(section.dialect), client_answers=section.client_answers,
        client_grace_s=section.client_timeout_s,
    )
