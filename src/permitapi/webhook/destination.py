"""Webhook destination URLs, checked against server-side request forgery (SSRF).

A URL is accepted only when every address the delivery could connect to is public. Numeric
hosts are recognised in every spelling the C resolver (inet_aton) and WHATWG URL parsers
accept, before any DNS lookup, so `https://0x7f.1/` cannot reach loopback by looking like a
name. Resolved addresses are checked again on every attempt (see attempt.py), and the attempt
connects to the checked address itself, so a name that re-resolves elsewhere is not followed.
"""

from __future__ import annotations

import asyncio
import socket
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Final
from urllib.parse import unquote, urlsplit

CODE: Final = "invalid_webhook_url"
MAX_URL_LENGTH: Final = 2048
# DNS names are at most 253 characters written out (RFC 1035 255-octet wire form).
MAX_HOST_LENGTH: Final = 253
MAX_LABEL_LENGTH: Final = 63
DEFAULT_PORTS: Final = {"https": 443, "http": 80}
# A stalled lookup must not hold a registration request (or a delivery slot) indefinitely.
RESOLVE_TIMEOUT_SECONDS: Final = 10.0

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the IP addresses the host resolves to, as strings."""

IPAddress = IPv4Address | IPv6Address

_HOST_CHARACTERS: Final = frozenset(string.ascii_lowercase + string.digits + "-_.")
_OCTAL_DIGITS: Final = frozenset("01234567")
_HEX_DIGITS: Final = frozenset(string.hexdigits)
LOOPBACK_NAME: Final = "localhost"
# Names that by convention or standard (RFC 6761, RFC 6762, RFC 8375, ICANN's .internal) stay
# on the local network or cloud control plane; their DNS answers are not worth trusting.
_LOCAL_SUFFIXES: Final = (
    ".localhost",
    ".local",
    ".localdomain",
    ".internal",
    ".home.arpa",
    ".arpa",
)

# Checked before the `ipaddress` properties so the reason names the specific range. Ranges
# `ipaddress` (3.11) still calls global are listed because the standards say otherwise.
_V4_RANGES: Final[tuple[tuple[IPv4Network, str], ...]] = tuple(
    (IPv4Network(network), label)
    for network, label in (
        ("0.0.0.0/8", "an unspecified"),
        ("10.0.0.0/8", "a private"),
        ("100.64.0.0/10", "a carrier-grade NAT (shared)"),
        ("169.254.0.0/16", "a link-local"),
        ("172.16.0.0/12", "a private"),
        ("192.0.0.0/24", "an IETF protocol assignment"),
        ("192.0.2.0/24", "a documentation"),
        ("192.88.99.0/24", "a 6to4 relay anycast"),
        ("192.168.0.0/16", "a private"),
        ("198.18.0.0/15", "a benchmarking"),
        ("198.51.100.0/24", "a documentation"),
        ("203.0.113.0/24", "a documentation"),
        ("224.0.0.0/4", "a multicast"),
        ("255.255.255.255/32", "a broadcast"),
        ("240.0.0.0/4", "a reserved"),
    )
)
_V6_RANGES: Final[tuple[tuple[IPv6Network, str], ...]] = tuple(
    (IPv6Network(network), label)
    for network, label in (
        ("::/128", "an unspecified"),
        ("::ffff:0:0/96", "an IPv4-mapped"),
        ("::ffff:0:0:0/96", "an IPv4-translated"),
        ("::/96", "an IPv4-compatible"),
        # RFC 8215: the operator chooses where the IPv4 address sits inside this prefix, so
        # the embedded address cannot be read back and checked.
        ("64:ff9b:1::/48", "a local-use NAT64"),
        ("100::/64", "a discard-only"),
        ("2001::/32", "a Teredo"),
        ("2001:2::/48", "a benchmarking"),
        ("2001:10::/28", "an ORCHID"),
        ("2001:20::/28", "an ORCHID"),
        ("2001:db8::/32", "a documentation"),
        ("3fff::/20", "a documentation"),
        ("5f00::/16", "an SRv6 segment identifier"),
        ("fc00::/7", "a unique-local"),
        ("fe80::/10", "a link-local"),
        ("fec0::/10", "a site-local"),
        ("ff00::/8", "a multicast"),
    )
)
_NAT64_WELL_KNOWN: Final = IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE: Final = IPv6Network("::/96")
_IPV4_TRANSLATED: Final = IPv6Network("::ffff:0:0:0/96")


class DestinationRefused(ValueError):
    """A webhook URL that must not be registered or delivered to."""

    code: str
    reason: str

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.code = CODE
        self.reason = reason


@dataclass(frozen=True)
class Destination:
    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]


def parse_url(url: str, *, allow_loopback_http: bool) -> tuple[str, str, int, str]:
    """(scheme, host, port, normalised url), checking everything that needs no DNS lookup:
    syntax, scheme, credentials, fragment, and numeric or well-known local hosts."""
    if len(url) > MAX_URL_LENGTH:
        raise DestinationRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    # urlsplit silently drops tabs and newlines and strips leading spaces (as WHATWG does),
    # so the URL it parses would not be the one the client sent.
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url):
        raise DestinationRefused("The URL must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise DestinationRefused("The URL is malformed.") from None
    scheme = parts.scheme
    if scheme not in DEFAULT_PORTS or (scheme == "http" and not allow_loopback_http):
        raise DestinationRefused("The URL must use https.")
    if "#" in url:
        raise DestinationRefused("The URL must not contain a fragment (#...).")
    netloc = parts.netloc
    if not netloc:
        raise DestinationRefused("The URL must include a host.")
    if "@" in netloc:
        raise DestinationRefused("The URL must not contain credentials (user:password@).")

    host, port = _split_netloc(netloc, DEFAULT_PORTS[scheme])
    literal: IPAddress | None
    if host.startswith("["):
        literal = _bracketed_address(host)
    else:
        host = _normalise_name(host)
        literal = classify_literal_host(host)
        if literal is None and _ends_in_number(host):
            # inet_aton would reject it and a resolver would then look it up as a name, but a
            # numeric-looking host is never a real name: refusing outright leaves no room for a
            # resolver that reads it more leniently than this parser does.
            raise DestinationRefused(f"The host {host} is not a valid IPv4 address.")

    # The allowance exists for plain-http receivers on the developer's machine; an https URL
    # to loopback has no such use and stays refused.
    loopback_allowed = allow_loopback_http and scheme == "http"
    if literal is not None:
        check_address(literal, allow_loopback=loopback_allowed)
        host = str(literal)
        is_loopback = literal.is_loopback
    else:
        _check_name(host, allow_loopback=loopback_allowed)
        is_loopback = host == LOOPBACK_NAME
    if scheme == "http" and not is_loopback:
        raise DestinationRefused("The URL must use https (plain http is allowed for loopback).")

    written_host = f"[{host}]" if ":" in host else host
    authority = written_host if port == DEFAULT_PORTS[scheme] else f"{written_host}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    normalised = f"{scheme}://{authority}{parts.path or '/'}{query}"
    if len(normalised) > MAX_URL_LENGTH:
        raise DestinationRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    return scheme, host, port, normalised


def classify_literal_host(host: str) -> IPv4Address | IPv6Address | None:
    """The address a numeric host denotes in any spelling (dotted, single integer, hex, octal,
    short or mixed IPv4 forms; IPv6 with or without brackets; full-width digits, percent
    escapes); None when the host is a name or not a valid address."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return IPv6Address(host)
        except ValueError:
            return None
    if "%" in host:
        try:
            host = unquote(host, errors="strict")
        except UnicodeDecodeError:
            return None
    if not host.isascii():
        try:
            # Nameprep (NFKC) turns full-width digits and ideographic full stops into ASCII,
            # exactly as a URL parser does before reading the host as an address.
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return _parse_ipv4(host)


def check_address(address: IPv4Address | IPv6Address, *, allow_loopback: bool) -> None:
    """Refuses any address a webhook must not reach: everything but public unicast, with
    loopback let through only when `allow_loopback`."""
    refusal = _refusal(address, allow_loopback=allow_loopback)
    if refusal is not None:
        raise DestinationRefused(f"The host resolves to {refusal}.")


async def resolve_destination(
    url: str, *, allow_loopback_http: bool, resolver: Resolver | None = None
) -> Destination:
    """The validated destination of `url`, with the addresses the connection may use; refused
    when any address the host resolves to is not public."""
    scheme, host, port, normalised = parse_url(url, allow_loopback_http=allow_loopback_http)
    literal = classify_literal_host(host)
    if literal is not None:
        return Destination(normalised, scheme, host, port, (str(literal),))

    resolve = resolver or system_resolver
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_SECONDS):
            answers = await resolve(host, port)
    except (OSError, TimeoutError):
        raise DestinationRefused(f"The host {host} does not resolve.") from None
    if not answers:
        raise DestinationRefused(f"The host {host} does not resolve.")

    is_localhost = host == LOOPBACK_NAME
    addresses: list[IPAddress] = []
    for answer in answers:
        try:
            address = ip_address(answer)
        except ValueError:
            raise DestinationRefused(
                f"The host {host} resolves to an invalid address ({answer!r})."
            ) from None
        # Only the name `localhost` itself may lead to loopback: any other name pointing there
        # is a rebinding attempt, whatever the flag says.
        check_address(address, allow_loopback=is_localhost)
        if is_localhost and not address.is_loopback:
            raise DestinationRefused(
                f"The host {host} resolves to a non-loopback address ({address})."
            )
        if address not in addresses:
            addresses.append(address)
    return Destination(normalised, scheme, host, port, tuple(map(str, addresses)))


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found = (
        str(sockaddr[0])
        for family, _, _, _, sockaddr in infos
        if family in (socket.AF_INET, socket.AF_INET6)
    )
    return list(dict.fromkeys(found))


def _split_netloc(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise DestinationRefused("The URL is malformed.")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            raise DestinationRefused("The URL is malformed.")
        port_text = rest[1:] if rest else None
    else:
        host, separator, port_text_or_empty = netloc.partition(":")
        if ":" in port_text_or_empty:
            raise DestinationRefused(
                "The host and port are malformed (an IPv6 host is written in brackets)."
            )
        port_text = port_text_or_empty if separator else None
    if not host or host == "[]":
        raise DestinationRefused("The URL must include a host.")
    # An empty port ("host:") means the default, as in WHATWG URLs.
    if not port_text:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5):
        raise DestinationRefused("The port must be a number from 1 to 65535.")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise DestinationRefused("The port must be a number from 1 to 65535.")
    return host, port


def _bracketed_address(host: str) -> IPv6Address:
    inner = host[1:-1]
    if "%" in inner:
        raise DestinationRefused("The host must not carry an IPv6 zone identifier (%...).")
    try:
        return IPv6Address(inner)
    except ValueError:
        raise DestinationRefused(f"The host {host} is not a valid IPv6 address.") from None


def _normalise_name(host: str) -> str:
    if "%" in host:
        raise DestinationRefused("The host must not be percent-encoded.")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise DestinationRefused("The host is not a valid internationalised name.") from None
    host = host.lower()
    # The root label's dot names the same host; dropping it keeps `localhost.` and `127.0.0.1.`
    # from slipping past the checks below.
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if (
        not host
        or len(host) > MAX_HOST_LENGTH
        or not set(host) <= _HOST_CHARACTERS
        or any(not 1 <= len(label) <= MAX_LABEL_LENGTH for label in labels)
    ):
        raise DestinationRefused("The host is not a valid host name.")
    return host


def _check_name(host: str, *, allow_loopback: bool) -> None:
    if host == LOOPBACK_NAME:
        if allow_loopback:
            return
        raise DestinationRefused("The host localhost is a loopback address.")
    if host.endswith(_LOCAL_SUFFIXES):
        raise DestinationRefused(f"The host {host} is a local-network name.")
    if "." not in host:
        # A single label is completed by the resolver's search domains, i.e. the operator's
        # internal zone, never a public receiver.
        raise DestinationRefused(f"The host {host} is not a fully qualified domain name.")


def _ends_in_number(host: str) -> bool:
    last = host.rsplit(".", 1)[-1]
    if last.isascii() and last.isdigit():
        return True
    return last[:2] == "0x" and set(last[2:]) <= _HEX_DIGITS


def _parse_ipv4(host: str) -> IPv4Address | None:
    """inet_aton: 1 to 4 parts, each decimal, 0x hex or 0-prefixed octal; every part but the
    last is one byte, the last fills the remaining bytes."""
    parts = host.split(".")
    # WHATWG drops one trailing empty part, so `127.0.0.1.` is an address.
    if len(parts) > 1 and not parts[-1]:
        parts.pop()
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _parse_ipv4_part(part)
        if value is None:
            return None
        values.append(value)
    *head, last = values
    if any(value > 0xFF for value in head) or last >= 1 << (8 * (5 - len(values))):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return IPv4Address(number)


def _parse_ipv4_part(part: str) -> int | None:
    if part[:2] in ("0x", "0X"):
        digits = part[2:]
        if not set(digits) <= _HEX_DIGITS:
            return None
        # Both glibc and WHATWG read a bare `0x` as zero.
        return int(digits, 16) if digits else 0
    if not (part.isascii() and part.isdigit()):
        return None
    if len(part) > 1 and part[0] == "0":
        return int(part, 8) if set(part) <= _OCTAL_DIGITS else None
    return int(part)


def _refusal(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why `address` is refused, as "<article> <kind> address (<address>)"; None if allowed."""
    if isinstance(address, IPv6Address):
        return _refusal_v6(address, allow_loopback=allow_loopback)
    return _refusal_v4(address, allow_loopback=allow_loopback)


def _refusal_v4(address: IPv4Address, *, allow_loopback: bool) -> str | None:
    if address.is_loopback:
        return None if allow_loopback else f"a loopback address ({address})"
    for network, label in _V4_RANGES:
        if address in network:
            return f"{label} address ({address})"
    if (
        address.is_private
        or address.is_reserved
        or address.is_multicast
        or address.is_link_local
        or address.is_unspecified
        or not address.is_global
    ):
        return f"a non-public address ({address})"
    return None


def _refusal_v6(address: IPv6Address, *, allow_loopback: bool) -> str | None:
    if address.scope_id:
        return f"a zone-scoped address ({address})"
    for form, embedded in _embedded_ipv4(address):
        inner = _refusal_v4(embedded, allow_loopback=False)
        if inner is not None:
            return f"{form} address ({address}) embedding {inner}"
    # The well-known NAT64 prefix is what DNS64 hands out on IPv6-only networks; with a public
    # IPv4 address inside it leads to that public host, although `ipaddress` calls it reserved.
    if address in _NAT64_WELL_KNOWN:
        return None
    if address.is_loopback:
        return None if allow_loopback else f"a loopback address ({address})"
    for network, label in _V6_RANGES:
        if address in network:
            return f"{label} address ({address})"
    if (
        address.is_private
        or address.is_reserved
        or address.is_multicast
        or address.is_link_local
        or address.is_site_local
        or address.is_unspecified
        or not address.is_global
    ):
        return f"a non-public address ({address})"
    return None


def _embedded_ipv4(address: IPv6Address) -> list[tuple[str, IPv4Address]]:
    """Every IPv4 address an IPv6 address carries (the one a translator, tunnel or dual-stack
    socket would actually connect to), with the name of the form it is carried in."""
    found: list[tuple[str, IPv4Address]] = []
    low32 = IPv4Address(address.packed[12:])
    if address.ipv4_mapped is not None:
        found.append(("an IPv4-mapped", address.ipv4_mapped))
    elif address in _IPV4_TRANSLATED:
        found.append(("an IPv4-translated", low32))
    elif address in _IPV4_COMPATIBLE and int(address) > 1:
        found.append(("an IPv4-compatible", low32))
    elif address in _NAT64_WELL_KNOWN:
        found.append(("a NAT64", low32))
    if address.sixtofour is not None:
        found.append(("a 6to4", address.sixtofour))
    if address.teredo is not None:
        server, client = address.teredo
        found.extend((("a Teredo", server), ("a Teredo", client)))
    return found
