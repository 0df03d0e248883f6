"""The reference's peer-to-peer network for Madoi: the libp2p adapter of the core's NetworkPort, and its assembly.

Off by default; ``MADOI_NETWORK_ENABLED=true`` (or ``[network] enabled = true``) turns it on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.settings.model import Settings
    from companions.companion.cast import CompanionCast
    from companions.conversation import ConversationManager
    from companions.network.link import NetworkLink
    from companions.wire.bus import Bus


def build_network(all_settings: Settings, bus: Bus, cast: CompanionCast,
                  conversation: ConversationManager) -> NetworkLink | None:
    """The network part for the settings (``None`` when off), joined to ``conversation``; the cast's trust policy
    says which peers may get a line that holds the user's private things (companions/trust/outbound.py).

    Its companions are this process's cast; the ones that join from elsewhere take part in ``conversation`` and
    are the cast's guests while their peer is there (the local companions' prompts name them as present).
    """
    settings = all_settings.network
    if not settings.enabled:
        return None
    from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
    from companions.network.link import NetworkLink

    port = Libp2pNetwork(Libp2pConfig(listen=settings.listen, peers=tuple(settings.peers), mdns=settings.mdns))
    # The cast as it is at each moment: a companion the user adds, edits or removes while running is announced,
    # reserved and published as this app's own (companions/network/link.py follows CastChanged).
    return NetworkLink(bus, port, local=lambda: [c.metadata for c in cast],
                       local_ids=lambda: cast.companions.keys(),  # noqa: PLW0108 (the cast's companions of the moment)
                       user_id=all_settings.general.user_name, roster=conversation, guests=cast.guests,
                       trust=cast.trust_policy)
