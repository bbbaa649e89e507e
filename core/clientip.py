"""The client address of a request: the socket peer, or behind TRUSTED_PROXIES the right-most
untrusted X-Forwarded-For hop; the allowance key of an address."""

import ipaddress
from functools import lru_cache

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse(value: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(value.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(entry, strict=False) for entry in entries]


def _trusted_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    # Parsed once per distinct setting, not on every request without a key.
    return _networks(tuple(settings.TRUSTED_PROXIES))


def is_trusted_proxy(remote_addr: str) -> bool:
    """Whether the socket peer is one of TRUSTED_PROXIES (whose forwarded headers count)."""
    peer = _parse(remote_addr or "")
    return peer is not None and any(peer in network for network in _trusted_networks())


def client_address(*, remote_addr: str, forwarded_for: str | None) -> IPAddress | None:
    """The socket peer, unless it is a trusted proxy: then the right-most untrusted address
    of X-Forwarded-For. Entries left of that are client-supplied and ignored, so a client
    cannot pick its own address by sending the header."""
    peer = _parse(remote_addr or "")
    trusted = _trusted_networks()
    if peer is None or not any(peer in network for network in trusted):
        return peer
    for entry in reversed((forwarded_for or "").split(",")):
        hop = _parse(entry)
        if hop is None:
            break  # garbage from the client side: the last good hop is the client
        peer = hop
        if not any(hop in network for network in trusted):
            break
    return peer


def client_key(address: IPAddress | None) -> str:
    """The allowance key of an address: IPv4 as is, IPv6 per /64 (one subscriber's LAN)."""
    if address is None:
        return "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
