"""Webhook destinations: the SSRF table, decided before any DNS query where the host is numeric
and on every resolved address where it is a name."""

from __future__ import annotations

import asyncio
import socket
from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest

from permitapi.webhook import destination as destination_module
from permitapi.webhook.destination import (
    DestinationRefused,
    check_address,
    classify_literal_host,
    parse_url,
    resolve_destination,
    system_resolver,
)

REFUSED = [
    # private, loopback, link-local, CGNAT, multicast, unspecified, broadcast, reserved,
    # benchmarking, documentation
    "https://10.0.0.1/h",
    "https://172.16.5.4/h",
    "https://172.31.255.255/h",
    "https://192.168.1.1/h",
    "https://127.0.0.1/h",
    "https://127.255.255.254/h",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/h",
    "https://100.127.255.254/h",
    "https://224.0.0.1/h",
    "https://239.255.255.250/h",
    "https://0.0.0.0/h",
    "https://0.1.2.3/h",
    "https://255.255.255.255/h",
    "https://198.18.0.1/h",
    "https://198.19.255.255/h",
    "https://192.0.2.10/h",
    "https://198.51.100.7/h",
    "https://203.0.113.9/h",
    "https://192.0.0.9/h",
    "https://192.88.99.1/h",
    "https://240.0.0.1/h",
    # numeric encodings of loopback and private addresses
    "https://2130706433/h",
    "https://2130706433./h",
    "https://0x7f000001/h",
    "https://0X7F000001/h",
    "https://0x7f.0.0.1/h",
    "https://0x7F.0x0.0x0.0x1/h",
    "https://0x7f.1/h",
    "https://0x00007f.1/h",
    "https://0177.0.0.1/h",
    "https://0000177.0.0.1/h",
    "https://017700000001/h",
    "https://127.000.000.001/h",
    "https://127.1/h",
    "https://127.0.1/h",
    "https://127.0.0x1/h",
    "https://0x7f.0.01/h",
    "https://0x7f.0x0.1/h",
    "https://10.1/h",
    "https://167772161/h",
    "https://0xa9.0xfe.0xa9.0xfe/h",
    "https://0251.0376.0251.0376/h",
    "https://0/h",
    "https://0x0/h",
    "https://0x/h",
    "https://127.0.0.1./h",
    "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/h",  # full-width digits
    "https://127\u30020.0.1/h",  # ideographic full stop
    "https://%31%32%37.0.0.1/h",
    # IPv6 forms
    "https://[::1]/h",
    "https://[0:0:0:0:0:0:0:1]/h",
    "https://[::]/h",
    "https://[fe80::1]/h",
    "https://[fec0::1]/h",
    "https://[fc00::1]/h",
    "https://[fd12:3456::1]/h",
    "https://[ff02::1]/h",
    "https://[ff0e::1]/h",
    "https://[2001:db8::1]/h",
    "https://[100::1]/h",
    "https://[::ffff:127.0.0.1]/h",
    "https://[::ffff:7f00:1]/h",
    "https://[::ffff:10.0.0.1]/h",
    "https://[::ffff:169.254.169.254]/h",
    "https://[::ffff:93.184.216.34]/h",
    "https://[::ffff:0:7f00:1]/h",
    "https://[::127.0.0.1]/h",
    "https://[::10.0.0.1]/h",
    "https://[64:ff9b::10.0.0.1]/h",
    "https://[64:ff9b::7f00:1]/h",
    "https://[64:ff9b::a9fe:a9fe]/h",
    "https://[64:ff9b:1::a00:1]/h",
    "https://[64:ff9b:1::5db8:d822]/h",
    "https://[2002:a00:1::1]/h",
    "https://[2002:7f00:1::1]/h",
    "https://[2002:c0a8:101::1]/h",
    "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/h",  # Teredo client 10.0.0.1
    "https://[2001:0:a00:1:8000:63bf:a247:27dd]/h",  # Teredo server 10.0.0.1
    "https://[fe80::1%25eth0]/h",
    "https://[fe80::1%eth0]/h",
    "https://[127.0.0.1]/h",
    "https://[v1.x]/h",
    "https://[::1/h",
    "https://::1/h",
    # names that are never public
    "https://localhost/h",
    "https://LOCALHOST/h",
    "https://localhost./h",
    "https://api.localhost/h",
    "https://printer.local/h",
    "https://metadata.google.internal/computeMetadata",
    "https://db.internal/h",
    "https://router.home.arpa/h",
    "https://intranet/h",
    # malformed numeric hosts: refused rather than handed to DNS
    "https://09.0.0.1/h",
    "https://08/h",
    "https://256.1.1.1/h",
    "https://1.2.3.4.5/h",
    "https://1.2.3.256/h",
    "https://1.2.65536/h",
    "https://1.16777216/h",
    "https://4294967296/h",
    "https://0x100000000/h",
    "https://0x7g.0.0.1/h",
    "https://example.123/h",
    # shape of the URL
    "http://example.com/h",
    "http://93.184.216.34/h",
    "ftp://example.com/h",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "gopher://example.com/h",
    "https://user:pass@example.com/h",
    "https://user@example.com/h",
    "https://@example.com/h",
    "https://example.com\\@127.0.0.1/h",
    "https://example.com/h#frag",
    "https://example.com/h#",
    "https://example.com:0/h",
    "https://example.com:65536/h",
    "https://example.com:99999999/h",
    "https://example.com:-1/h",
    "https://example.com:+443/h",
    "https://example.com:abc/h",
    "https://example.com:443:443/h",
    "https:///h",
    "https://",
    "https:example.com/h",
    "https://exa mple.com/h",
    "https://example.com/h\n",
    "https://exa\tmple.com/h",
    " https://example.com/h",
    "https://exa*mple.com/h",
    "https://example..com/h",
    "https://" + "a" * 64 + ".example.com/h",
    "https://example.com/" + "a" * 2050,
    "example.com/h",
    "",
]


@pytest.mark.parametrize("url", REFUSED)
async def test_refused_without_dns(url: str) -> None:
    async def no_dns(host: str, port: int) -> list[str]:
        raise AssertionError(f"{url} should be refused before resolving {host}")

    with pytest.raises(DestinationRefused) as refused:
        await resolve_destination(url, allow_loopback_http=False, resolver=no_dns)
    assert refused.value.code == "invalid_webhook_url"
    assert refused.value.reason


@pytest.mark.parametrize("url", REFUSED)
def test_parse_url_refuses_without_dns(url: str) -> None:
    with pytest.raises(DestinationRefused):
        parse_url(url, allow_loopback_http=False)


async def fake_dns(host: str, port: int) -> list[str]:
    return {
        "example.com": ["93.184.216.34"],
        "hooks.example.com": ["93.184.216.34"],
        "dual.example.com": ["93.184.216.34", "2606:2800:220:1::1"],
        "repeat.example.com": ["93.184.216.34", "93.184.216.34", "2606:2800:220:1:0:0:0:1"],
        "nat64.example.com": ["64:ff9b::5db8:d822"],
        "xn--bcher-kva.example": ["93.184.216.34"],
        "mixed.example.com": ["93.184.216.34", "10.1.2.3"],
        "mixed6.example.com": ["2606:2800:220:1::1", "fd00::1"],
        "rebind.example.com": ["127.0.0.1"],
        "mapped.example.com": ["::ffff:192.168.0.1"],
        "cgnat.example.com": ["100.100.100.100"],
        "metadata.example.com": ["169.254.169.254"],
        "nat64private.example.com": ["64:ff9b::a00:1"],
        "zero.example.com": ["0.0.0.0"],
        "linklocal6.example.com": ["fe80::1"],
        "garbage.example.com": ["not-an-address"],
    }.get(host, [])


@pytest.mark.parametrize(
    ("url", "normalised", "host", "port", "addresses"),
    [
        (
            "https://example.com/hook",
            "https://example.com/hook",
            "example.com",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://hooks.example.com/permits",
            "https://hooks.example.com/permits",
            "hooks.example.com",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://dual.example.com:8443/x?y=1",
            "https://dual.example.com:8443/x?y=1",
            "dual.example.com",
            8443,
            ("93.184.216.34", "2606:2800:220:1::1"),
        ),
        (
            "https://repeat.example.com/",
            "https://repeat.example.com/",
            "repeat.example.com",
            443,
            ("93.184.216.34", "2606:2800:220:1::1"),
        ),
        (
            "https://93.184.216.34:8443/x",
            "https://93.184.216.34:8443/x",
            "93.184.216.34",
            8443,
            ("93.184.216.34",),
        ),
        (
            "https://[2606:4700:4700::1111]/",
            "https://[2606:4700:4700::1111]/",
            "2606:4700:4700::1111",
            443,
            ("2606:4700:4700::1111",),
        ),
        (
            "https://[2606:4700:4700:0:0:0:0:1111]:443",
            "https://[2606:4700:4700::1111]/",
            "2606:4700:4700::1111",
            443,
            ("2606:4700:4700::1111",),
        ),
        (
            "https://HOOKS.Example.COM/permits",
            "https://hooks.example.com/permits",
            "hooks.example.com",
            443,
            ("93.184.216.34",),
        ),
        (
            "HTTPS://example.com.:443?a=1&b=2",
            "https://example.com/?a=1&b=2",
            "example.com",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://example.com:/p",
            "https://example.com/p",
            "example.com",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://0x5db8d822/x",
            "https://93.184.216.34/x",
            "93.184.216.34",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://1572395042/x",
            "https://93.184.216.34/x",
            "93.184.216.34",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://b\u00fccher.example/",
            "https://xn--bcher-kva.example/",
            "xn--bcher-kva.example",
            443,
            ("93.184.216.34",),
        ),
        (
            "https://nat64.example.com/",
            "https://nat64.example.com/",
            "nat64.example.com",
            443,
            ("64:ff9b::5db8:d822",),
        ),
        (
            "https://[64:ff9b::93.184.216.34]/",
            "https://[64:ff9b::5db8:d822]/",
            "64:ff9b::5db8:d822",
            443,
            ("64:ff9b::5db8:d822",),
        ),
    ],
)
async def test_public_destinations_are_accepted(
    url: str, normalised: str, host: str, port: int, addresses: tuple[str, ...]
) -> None:
    destination = await resolve_destination(url, allow_loopback_http=False, resolver=fake_dns)
    assert destination.url == normalised
    assert destination.host == host
    assert destination.port == port
    assert destination.addresses == addresses
    assert destination.scheme == "https"


async def test_a_numeric_host_is_not_looked_up() -> None:
    async def no_dns(host: str, port: int) -> list[str]:
        raise AssertionError(f"{host} is numeric")

    destination = await resolve_destination(
        "https://93.184.216.34/h", allow_loopback_http=False, resolver=no_dns
    )
    assert destination.addresses == ("93.184.216.34",)


@pytest.mark.parametrize(
    "host",
    [
        "mixed.example.com",
        "mixed6.example.com",
        "rebind.example.com",
        "mapped.example.com",
        "cgnat.example.com",
        "metadata.example.com",
        "nat64private.example.com",
        "zero.example.com",
        "linklocal6.example.com",
    ],
)
async def test_a_name_resolving_to_any_non_public_address_is_refused(host: str) -> None:
    with pytest.raises(DestinationRefused, match="resolves to"):
        await resolve_destination(f"https://{host}/h", allow_loopback_http=False, resolver=fake_dns)


async def test_the_reason_names_the_range_and_the_address() -> None:
    with pytest.raises(DestinationRefused) as refused:
        await resolve_destination(
            "https://mixed.example.com/h", allow_loopback_http=False, resolver=fake_dns
        )
    assert refused.value.reason == "The host resolves to a private address (10.1.2.3)."
    assert str(refused.value) == refused.value.reason
    assert isinstance(refused.value, ValueError)


async def test_a_name_resolving_to_garbage_is_refused() -> None:
    with pytest.raises(DestinationRefused, match="invalid address"):
        await resolve_destination(
            "https://garbage.example.com/h", allow_loopback_http=False, resolver=fake_dns
        )


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    with pytest.raises(DestinationRefused, match="does not resolve"):
        await resolve_destination(
            "https://nothing.example.com/h", allow_loopback_http=False, resolver=fake_dns
        )


async def test_a_resolver_failure_is_a_refusal() -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(DestinationRefused, match=r"The host nothing\.example\.com does not"):
        await resolve_destination(
            "https://nothing.example.com/h", allow_loopback_http=False, resolver=failing
        )


async def test_a_stalled_lookup_is_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(destination_module, "RESOLVE_TIMEOUT_SECONDS", 0.01)

    async def stalled(host: str, port: int) -> list[str]:
        await asyncio.sleep(10)
        return ["93.184.216.34"]

    with pytest.raises(DestinationRefused, match="does not resolve"):
        await resolve_destination(
            "https://slow.example.com/h", allow_loopback_http=False, resolver=stalled
        )


async def test_the_resolver_is_asked_for_the_encoded_host_and_port() -> None:
    asked: list[tuple[str, int]] = []

    async def recording(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return ["93.184.216.34"]

    await resolve_destination(
        "https://B\u00fccher.Example:8443/h", allow_loopback_http=False, resolver=recording
    )
    assert asked == [("xn--bcher-kva.example", 8443)]


async def test_the_system_resolver_returns_distinct_addresses() -> None:
    assert await system_resolver("127.0.0.1", 443) == ["127.0.0.1"]


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9000/hook", "http://localhost:9000/hook", "http://[::1]:9000/h"]
)
async def test_loopback_http_only_when_allowed(url: str) -> None:
    async def loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with pytest.raises(DestinationRefused):
        await resolve_destination(url, allow_loopback_http=False, resolver=loopback)
    destination = await resolve_destination(url, allow_loopback_http=True, resolver=loopback)
    assert destination.scheme == "http"
    assert destination.port == 9000


@pytest.mark.parametrize(
    ("url", "normalised", "host", "port"),
    [
        ("http://127.0.0.1:9000/hook", "http://127.0.0.1:9000/hook", "127.0.0.1", 9000),
        ("http://127.1/hook", "http://127.0.0.1/hook", "127.0.0.1", 80),
        ("http://0x7f000001:80/", "http://127.0.0.1/", "127.0.0.1", 80),
        ("http://[::1]:9000", "http://[::1]:9000/", "::1", 9000),
        ("http://LocalHost:9000/h", "http://localhost:9000/h", "localhost", 9000),
    ],
)
def test_parse_url_normalises_loopback_http(
    url: str, normalised: str, host: str, port: int
) -> None:
    assert parse_url(url, allow_loopback_http=True) == ("http", host, port, normalised)


async def test_localhost_must_resolve_to_loopback_only() -> None:
    async def both(host: str, port: int) -> list[str]:
        return ["127.0.0.1", "::1"]

    async def hijacked(host: str, port: int) -> list[str]:
        return ["127.0.0.1", "93.184.216.34"]

    destination = await resolve_destination(
        "http://localhost:9000/h", allow_loopback_http=True, resolver=both
    )
    assert destination.addresses == ("127.0.0.1", "::1")
    with pytest.raises(DestinationRefused, match="non-loopback"):
        await resolve_destination(
            "http://localhost:9000/h", allow_loopback_http=True, resolver=hijacked
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/h",
        "http://93.184.216.34/h",
        "http://hooks.example.com/h",
        "http://rebind.example.com/h",
        "http://[::ffff:127.0.0.1]/h",
        "http://api.localhost/h",
        "http://0.0.0.0:9000/h",
        "https://127.0.0.1/h",
        "https://localhost/h",
        "https://[::1]/h",
        "https://rebind.example.com/h",
        "ftp://127.0.0.1/h",
        "http://user:pass@127.0.0.1/h",
        "http://127.0.0.1/h#frag",
    ],
)
async def test_the_loopback_allowance_covers_http_loopback_only(url: str) -> None:
    with pytest.raises(DestinationRefused):
        await resolve_destination(url, allow_loopback_http=True, resolver=fake_dns)


def test_the_length_limit_is_2048_characters() -> None:
    base = "https://example.com/"
    longest = base + "a" * (2048 - len(base))
    assert parse_url(longest, allow_loopback_http=False)[3] == longest
    with pytest.raises(DestinationRefused, match="longer than 2048"):
        parse_url(longest + "a", allow_loopback_http=False)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/h", "The URL must use https."),
        ("http://example.com/h", "The URL must use https."),
        ("https://u:p@example.com/h", "The URL must not contain credentials (user:password@)."),
        ("https://example.com/#x", "The URL must not contain a fragment (#...)."),
        ("https://[fe80::1%25eth0]/", "The host must not carry an IPv6 zone identifier (%...)."),
        ("https://256.0.0.1/", "The host 256.0.0.1 is not a valid IPv4 address."),
        ("https://0x7f.1/", "The host resolves to a loopback address (127.0.0.1)."),
        (
            "https://[64:ff9b::a00:1]/",
            "The host resolves to a NAT64 address (64:ff9b::a00:1) "
            "embedding a private address (10.0.0.1).",
        ),
        (
            "https://metadata.google.internal/",
            "The host metadata.google.internal is a local-network name.",
        ),
    ],
)
def test_refusal_reasons(url: str, reason: str) -> None:
    with pytest.raises(DestinationRefused) as refused:
        parse_url(url, allow_loopback_http=False)
    assert refused.value.reason == reason


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("127.000.000.001", "127.0.0.1"),
        ("0x7f.0.01", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("10.0x10000", "10.1.0.0"),
        ("192.168.0x101", "192.168.1.1"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),
        ("4294967295", "255.255.255.255"),
        ("1.16777215", "1.255.255.255"),
        ("\uff11\uff12\uff17.\uff10.\uff10.\uff11", "127.0.0.1"),
        ("127\u30020.0.1", "127.0.0.1"),
        ("%31%32%37.0.0.1", "127.0.0.1"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("64:ff9b::10.0.0.1", "64:ff9b::a00:1"),
        ("example.com", None),
        ("0x7f.example", None),
        ("256.0.0.1", None),
        ("1.2.3.4.5", None),
        ("08.0.0.1", None),
        ("0x7g", None),
        ("4294967296", None),
        ("1.16777216", None),
        ("1.2.65536", None),
        ("1..2", None),
        ("", None),
        ("::gg", None),
    ],
)
def test_classify_literal_host(host: str, expected: str | None) -> None:
    result = classify_literal_host(host)
    assert result == (None if expected is None else ip_address(expected))


NOT_PUBLIC = [
    "10.0.0.1",
    "172.16.0.1",
    "192.168.0.1",
    "127.0.0.1",
    "127.8.9.10",
    "169.254.169.254",
    "100.64.0.1",
    "224.0.0.251",
    "233.252.0.1",
    "0.0.0.0",
    "0.255.255.255",
    "255.255.255.255",
    "198.18.0.1",
    "192.0.2.1",
    "198.51.100.1",
    "203.0.113.1",
    "192.0.0.170",
    "240.0.0.1",
    "::",
    "::1",
    "fe80::1",
    "fec0::1",
    "fc00::1",
    "fdff::1",
    "ff02::1",
    "ff0e::1",
    "2001:db8::1",
    "3fff::1",
    "100::1",
    "2001:2::1",
    "2001:10::1",
    "5f00::1",
    "::ffff:10.0.0.1",
    "::ffff:93.184.216.34",
    "::ffff:0:10.0.0.1",
    "::10.0.0.1",
    "::93.184.216.34",
    "64:ff9b::127.0.0.1",
    "64:ff9b::192.168.1.1",
    "64:ff9b:1::93.184.216.34",
    "2002:a9fe:a9fe::1",
    "2002:6440:1::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo client 127.0.0.1
]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_check_address_refuses_non_public(address: str) -> None:
    with pytest.raises(DestinationRefused, match="resolves to") as refused:
        check_address(ip_address(address), allow_loopback=False)
    assert refused.value.code == "invalid_webhook_url"


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::8.8.8.8"],
)
def test_check_address_accepts_public(address: str) -> None:
    check_address(ip_address(address), allow_loopback=False)


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        (IPv4Address("127.0.0.1"), True),
        (IPv4Address("127.0.0.53"), True),
        (IPv6Address("::1"), True),
        (IPv6Address("::ffff:127.0.0.1"), False),
        (IPv6Address("::127.0.0.1"), False),
        (IPv4Address("10.0.0.1"), False),
        (IPv4Address("0.0.0.0"), False),
        (IPv6Address("::"), False),
        (IPv6Address("fe80::1"), False),
    ],
)
def test_the_loopback_allowance_admits_loopback_alone(
    address: IPv4Address | IPv6Address, allowed: bool
) -> None:
    if allowed:
        check_address(address, allow_loopback=True)
    else:
        with pytest.raises(DestinationRefused):
            check_address(address, allow_loopback=True)


def test_a_zone_scoped_address_is_refused() -> None:
    with pytest.raises(DestinationRefused, match="zone"):
        check_address(IPv6Address("2606:4700:4700::1111%eth0"), allow_loopback=False)
