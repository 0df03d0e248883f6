"""The addresses this node tells the user (and other machines) it can be reached at."""

from __future__ import annotations


def dialable(addresses: tuple[str, ...]) -> tuple[str, ...]:
    """Addresses another machine can dial: ``/ip4/0.0.0.0/`` becomes each of this machine's IPv4 addresses (the
    ones a user copies into the other computer's ``MADOI_NETWORK_PEERS``), loopback last."""
    wildcard = "/ip4/0.0.0.0/"
    if not any(a.startswith(wildcard) for a in addresses):
        return addresses
    try:
        import ifaddr

        ips = sorted({str(ip.ip) for adapter in ifaddr.get_adapters() for ip in adapter.ips
                      if isinstance(ip.ip, str)}, key=lambda ip: (ip.startswith("127."), ip))
    except Exception:  # no interface list: the wildcard stays (the user then names the machine's address)
        return addresses
    out: list[str] = []
    for address in addresses:
        out += [address.replace(wildcard, f"/ip4/{ip}/", 1) for ip in ips] if address.startswith(wildcard) \
            else [address]
    return tuple(out)
