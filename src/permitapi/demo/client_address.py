"""Which address a request comes from, for per-address limits.

The peer's address, unless the peer is a trusted reverse proxy (PERMITAPI_TRUSTED_PROXIES,
default none): then the nearest address in X-Forwarded-For that is not itself a trusted proxy,
read right to left, because only the entries our own proxies appended can be believed; a
client may put anything at the left end.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache

from starlette.requests import Request

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(trusted: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item.strip(), strict=False) for item in trusted)


def _trusted(address: str, networks: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(request: Request, trusted_proxies: Sequence[str]) -> str:
    peer = request.client.host if request.client else "unknown"
    networks = _networks(tuple(trusted_proxies))
    if not networks or not _trusted(peer, networks):
        return peer
    forwarded = [
        part.strip()
        for header in request.headers.getlist("x-forwarded-for")
        for part in header.split(",")
        if part.strip()
    ]
    for candidate in reversed(forwarded):
        if not _trusted(candidate, networks):
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                return peer  # a malformed hop: fall back to what we know
    return peer
