"""One HTTP attempt to a webhook receiver, made only to an address validated just before.

The destination is resolved and validated on every attempt (a hostname that resolved to a
public address at registration may resolve to a private one now) and the connection goes to the
validated address itself, with the original Host header and TLS server name, so a second DNS
answer cannot redirect it. Redirects are never followed: a 3xx is a failed attempt.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit, urlunsplit

import httpx

from permitapi import __version__
from permitapi.kit.retry_after import parse_retry_after
from permitapi.webhook.destination import DestinationRefused, Resolver, resolve_destination

log = logging.getLogger("permitapi.webhook.attempt")

USER_AGENT: Final = f"permitapi-webhooks/{__version__}"
PREVIEW_CHARS: Final = 500
# A receiver's answer is read only this far: its body is a preview, never stored whole.
MAX_BODY_BYTES: Final = 16_384
CONNECT_TIMEOUT_SECONDS: Final = 5.0
# Standard Webhooks recommends 15-30 s; the lower end keeps a slow receiver from holding its
# webhook's single in-flight slot long.
TOTAL_TIMEOUT_SECONDS: Final = 15.0


@dataclass(frozen=True, slots=True)
class AttemptResult:
    status_code: int | None  # None: no HTTP answer (refused destination, transport failure)
    error: str | None
    retry_after_seconds: float | None = None
    body_preview: str | None = None
    refused: bool = False  # the destination failed validation: nothing was sent

    @property
    def acknowledged(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def gone(self) -> bool:
        return self.status_code == 410


def new_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(TOTAL_TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS),
        follow_redirects=False,
        trust_env=False,  # an environment proxy would connect to the name, not the address
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=100),
        headers={"user-agent": USER_AGENT},
    )


def _pinned_url(url: str, address: str) -> str:
    parts = urlsplit(url)
    ip = ipaddress.ip_address(address)
    host = f"[{ip}]" if ip.version == 6 else str(ip)
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


async def send(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    allow_loopback_http: bool,
    resolver: Resolver | None = None,
) -> AttemptResult:
    try:
        destination = await resolve_destination(
            url, allow_loopback_http=allow_loopback_http, resolver=resolver
        )
    except DestinationRefused as refused:
        return AttemptResult(None, f"destination refused: {refused.reason}", refused=True)
    host_header = destination.host if ":" not in destination.host else f"[{destination.host}]"
    default_port = 443 if destination.scheme == "https" else 80
    if destination.port != default_port:
        host_header = f"{host_header}:{destination.port}"
    request_headers = {**headers, "host": host_header}
    extensions = {"sni_hostname": destination.host} if destination.scheme == "https" else {}
    target = _pinned_url(destination.url, destination.addresses[0])
    try:
        request = client.build_request(
            "POST", target, headers=request_headers, content=body, extensions=extensions
        )
        response = await client.send(request, stream=True)
        try:
            preview = await _read_preview(response)
        finally:
            await response.aclose()
    except httpx.HTTPError as exc:
        return AttemptResult(None, f"{type(exc).__name__}: {exc}"[:300] or type(exc).__name__)
    except Exception as exc:
        # Whatever a receiver sends must end as a recorded attempt: an exception escaping here
        # would leave the delivery unattempted and re-sent forever, one lease apart.
        log.exception("webhook attempt to %s failed unexpectedly", destination.host)
        return AttemptResult(None, f"{type(exc).__name__}: {exc}"[:300] or type(exc).__name__)
    status = response.status_code
    if 200 <= status < 300:
        return AttemptResult(status, None, body_preview=preview)
    wait = parse_retry_after(response.headers.get("retry-after"))
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        error = f"HTTP {status}: redirects are not followed ({location[:200]})"
    else:
        error = f"HTTP {status}"
    return AttemptResult(status, error, retry_after_seconds=wait, body_preview=preview)


async def _read_preview(response: httpx.Response) -> str:
    received = bytearray()
    async for chunk in response.aiter_bytes():
        received.extend(chunk)
        if len(received) >= MAX_BODY_BYTES:
            break
    return bytes(received[:MAX_BODY_BYTES]).decode("utf-8", "replace")[:PREVIEW_CHARS]
