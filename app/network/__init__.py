"""The reference's peer-to-peer network for Madoi: the libp2p adapter of the core's NetworkPort, and its assembly.

Off by default; ``MADOI_NETWORK_ENABLED=true`` (or ``[network] enabled = true``) turns it on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.runtime import Runtime
    from companions.network.link import NetworkLink


def build_network(runtime: Runtime) -> NetworkLink | None:
    """The network component for ``runtime``'s settings (``None`` when off), joined to its conversation.

    Its companions are this process's cast; the ones that join from elsewhere take part in ``runtime.conversation``
    and are added to the cast's roster (the local companions' prompts name them as present).
    """
    settings = runtime.settings.network
    if not settings.enabled or runtime.cast is None:
        return None
    from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
    from companions.network.link import NetworkLink

    port = Libp2pNetwork(Libp2pConfig(listen=settings.listen, peers=tuple(settings.peers), mdns=settings.mdns))
    link = NetworkLink(runtime.bus, port, local=[c.metadata for c in runtime.cast],
                       user_id=runtime.settings.general.user_name, roster=runtime.conversation)
    cast = runtime.cast
    cast.guests = lambda: [p.metadata for p in link.remote.values() if p.reachable]
    return link
