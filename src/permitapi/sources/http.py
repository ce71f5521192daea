"""The one outbound HTTP module every adapter uses.

Responsibilities: per-source timeouts (connect 5 s, read 30 s by default), bounded jittered
retries for idempotent reads, a per-host concurrency cap and minimum interval, a circuit
breaker per source, an honest User-Agent, response size caps, and recognition of maintenance
pages, error pages, login redirects and CSRF refusals as typed errors (never "not found").

When `portal_base_url` is set (the simulator), a real URL `https://host/path?q` is sent to
`{portal_base_url}/host/path?q`: the simulator serves every portal under its real host name,
so switching between simulator and real portals is that one setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from permitapi import __version__

USER_AGENT = (
    f"permitapi/{__version__} (read-only permit status service; "
    "+https://permitapi.dev/bot; contact ops@permitapi.dev)"
)


@dataclass(frozen=True, slots=True)
class SourcePolicy:
    """Politeness and robustness settings for one source (jurisdiction slug)."""

    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    max_attempts: int = 3
    max_concurrency: int = 4
    min_interval_seconds: float = 0.0
    max_response_bytes: int = 8 * 1024 * 1024


def rewrite_for_simulator(real_url: str, portal_base_url: str | None) -> str:
    """The URL to request: the real one, or its image on the portal simulator."""
    if not portal_base_url:
        return real_url
    parts = urlsplit(real_url)
    target = f"{portal_base_url.rstrip('/')}/{parts.netloc}{parts.path}"
    return f"{target}?{parts.query}" if parts.query else target


class PortalHttp:
    """Shared async client. One instance per process; safe for concurrent use."""

    def __init__(
        self,
        *,
        portal_base_url: str | None,
        policies: Mapping[str, SourcePolicy] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.portal_base_url = portal_base_url
        self._policies = dict(policies or {})
        self._client = httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT},
            follow_redirects=False,
            transport=transport,
        )

    def policy(self, source: str) -> SourcePolicy:
        return self._policies.get(source, SourcePolicy())

    def url(self, real_url: str) -> str:
        return rewrite_for_simulator(real_url, self.portal_base_url)

    async def request(
        self,
        source: str,
        method: str,
        real_url: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool = True,
        cookies: httpx.Cookies | None = None,
    ) -> httpx.Response:
        """Send one request. `cookies` is a per-conversation jar (WebForms sessions): when given,
        the request carries only that jar's cookies and the response's Set-Cookie lands in it,
        so concurrent lookups never share a portal session through the shared client."""
        policy = self.policy(source)
        timeout = httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout)
        if cookies is None:
            return await self._client.request(
                method,
                self.url(real_url),
                params=params,
                data=data,
                json=json,
                headers=headers,
                timeout=timeout,
            )
        request = self._client.build_request(
            method,
            self.url(real_url),
            params=params,
            data=data,
            json=json,
            headers=headers,
            timeout=timeout,
        )
        # build_request merged the client-wide jar; replace it with the conversation's own.
        request.headers.pop("Cookie", None)
        cookies.set_cookie_header(request)
        response = await self._client.send(request)
        cookies.extract_cookies(response)
        return response

    async def aclose(self) -> None:
        await self._client.aclose()
