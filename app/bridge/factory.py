"""Builds the bridge from the settings: the one function the assembly calls."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from app.bridge.dialects import Dialect
from app.bridge.server import BridgeServer
from app.settings.model import BridgeSettings, Settings
from companions.companion.guests import Guests
from companions.conversation.participant import ParticipantRoster
from companions.wire.bus import Bus
from companions.wire.query_broker import QueryBroker


def build_bridge(bus: Bus, broker: QueryBroker, settings: Settings, *,
                 reserved_ids: Callable[[], Iterable[str]] = frozenset, roster: ParticipantRoster | None = None,
                 guests: Guests | None = None) -> BridgeServer | None:
    """The bridge for ``settings.bridge``, or ``None`` when it is turned off (port 0).

    ``reserved_ids`` returns the identities no client may claim in its hello (the companions' ids). A client's
    companion takes part in ``roster`` (the conversation) and is one of ``guests`` (the cast's: the local
    companions' prompts name it as present) while it is connected.

    Raises:
        BridgeConfigError: the host is not a loopback address and no token is set.
    """
    section = settings.bridge
    if not section.enabled:
        return None
    token = section.token.get_secret_value() if section.token is not None else None
    return BridgeServer(
        bus, broker, roster=roster, guests=guests,
        host=section.host, port=section.port, token=token,
        user_name=settings.general.user_name, reserved_ids=reserved_ids,
        max_frame_bytes=section.max_frame_bytes, max_frames_per_second=section.max_frames_per_second,
        dialect=Dialect(section.dialect), client_answers=section.client_answers,
        client_grace_s=section.client_timeout_s, **door_rules(section),
    )


def door_rules(section: BridgeSettings) -> dict[str, Any]:
    """The settings of the bridge's door (origins.py, the bounds and the quota), as :meth:`BridgeServer.use_rules`
    takes them."""
    return {"allowed_origins": section.allowed_origins, "max_connections": section.max_connections,
            "max_connections_per_address": section.max_connections_per_address,
            "max_messages_per_minute": section.max_messages_per_minute,
            "max_stored_bytes_per_minute": section.max_stored_bytes_per_minute}


def follow_settings(bridge: BridgeServer, settings: Settings) -> None:
    """Saved settings that do not move the bridge (same host, port and token) apply to the running one at once:
    the web pages it admits, its bounds and quota."""
    bridge.use_rules(**door_rules(settings.bridge))
