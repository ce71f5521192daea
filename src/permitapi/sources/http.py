"""The one outbound HTTP module every adapter uses.

Responsibilities: per-source timeouts (connect 5 s, read 30 s by default), bounded jittered
retries for idempotent reads, per-host politeness (a concurrency cap, an optional token bucket
and an optional minimum interval between request starts), a circuit breaker per source (its
state shared by every process through Redis when `shared_circuits` is given, else per process;
see `shared_circuit.py`), an honest User-Agent, response size caps, and recognition of
maintenance pages, error pages, login redirects and CSRF refusals as typed errors (never "not
found").

What a request can end in:

    2xx, 3xx (other than to Login.aspx / Error.aspx), 4xx other than 403/429
                            -> the response, for the adapter to interpret (a 404 may be data)
    timeout                 -> RetryLater(reason="timeout")
    connection error/drop   -> RetryLater(reason="down")
    500                     -> RetryLater(reason="server_error")
    502, 503, 504           -> RetryLater(reason="down"), or "maintenance" for a maintenance page
    429, 403 (not a wall)   -> RetryLater(reason="throttled"); Retry-After honoured
    403/200 wall page, redirect to Login.aspx   -> Blocked
    redirect to Error.aspx  -> RetryLater(reason="portal_error")
    body over the size cap  -> PortalChanged (a permit page never legitimately grows to megabytes;
                               retrying would fetch the same oversized body)
    circuit open            -> RetryLater(reason="circuit_open") without any request

Retries (idempotent requests only: GET/HEAD, or `idempotent=True`): up to `max_attempts`
attempts, full-jitter exponential backoff (`backoff_base_seconds` doubling, capped at
`backoff_max_seconds`); a Retry-After is the minimum wait, and one longer than
`max_retry_wait_seconds` is not waited for in-request (the RetryLater carries it instead).

When `portal_base_url` is set (the simulator), a real URL `https://host/path?q` is sent to
`{portal_base_url}/host/path?q`: the simulator serves every portal under its real host name,
so switching between simulator and real portals is that one setting.

The pieces: `http_policy.SourcePolicy` (the settings), `http_pacing.HostGate` (politeness per
host), `http_circuits.SourceCircuits` (the breakers); this module sends, retries and judges.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from permitapi import __version__
from permitapi.kit.retry_after import parse_retry_after
from permitapi.sources.base import PortalChanged, RetryLater
from permitapi.sources.circuit import CircuitSnapshot
from permitapi.sources.http_circuits import SourceCircuits
from permitapi.sources.http_pacing import HostGate
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.pages import classify_page, classify_url
from permitapi.sources.shared_circuit import SharedCircuits
from permitapi.sources.shared_pace import SharedPacer

USER_AGENT = (
    f"permitapi/{__version__} (read-only permit status service; "
    "+https://permitapi.dev/bot; contact ops@permitapi.dev)"
)
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_RETRY_AFTER = {
    "timeout": 30.0,
    "down": 60.0,
    "server_error": 60.0,
    "throttled": 60.0,
}


def rewrite_for_simulator(real_url: str, portal_base_url: str | None) -> str:
    """The URL to request: the real one, or its image on the portal simulator."""
    if not portal_base_url:
        return real_url
    parts = urlsplit(real_url)
    target = f"{portal_base_url.rstrip('/')}/{parts.netloc}{parts.path}"
    return f"{target}?{parts.query}" if parts.query else target


class _Retryable(Exception):
    """One attempt failed transiently; carries the error raised if no attempt is left and the
    wait the server asked for (Retry-After), if any."""

    def __init__(self, error: RetryLater, server_wait: float | None = None) -> None:
        self.error = error
        self.server_wait = server_wait


class _RejectAllCookies(http.cookiejar.DefaultCookiePolicy):
    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False


class PortalHttp:
    """Shared async client. One instance per process; safe for concurrent use."""

    def __init__(
        self,
        *,
        portal_base_url: str | None,
        policies: Mapping[str, SourcePolicy] | None = None,
        default_policy: SourcePolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        shared_pacer: SharedPacer | None = None,
        shared_circuits: SharedCircuits | None = None,
    ) -> None:
        self.portal_base_url = portal_base_url
        self._shared_pacer = shared_pacer
        self._policies = dict(policies or {})
        self._default_policy = default_policy or SourcePolicy()
        self._sleep = sleep
        self._gates: dict[str, HostGate] = {}
        self.circuits = SourceCircuits(self.policy, shared_circuits, monotonic)
        self._client = httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT},
            follow_redirects=False,
            transport=transport,
            # Portal sessions live only in per-conversation jars (`cookies=`); a client-wide jar
            # would carry one lookup's session cookie into every other request to that host.
            cookies=httpx.Cookies(http.cookiejar.CookieJar(policy=_RejectAllCookies())),
            # httpx keeps 20 idle connections for 5 s: a batch's 25 page requests after a quiet
            # moment opened 25 new connections (and TLS handshakes) every time. Keep a burst's
            # worth for 30 s; servers close idle ones sooner if they wish (IIS: 120 s).
            limits=httpx.Limits(
                max_connections=100, max_keepalive_connections=32, keepalive_expiry=30.0
            ),
        )

    # -- configuration and state ---------------------------------------------------------------
    def policy(self, source: str) -> SourcePolicy:
        found = self._policies.get(source)
        if found is None and ":" in source:
            # A part of a source with its own circuit ("epicla:energov") still owes the
            # source's politeness: without this its requests went out unpaced.
            found = self._policies.get(source.rsplit(":", 1)[0])
        return found or self._default_policy

    def url(self, real_url: str) -> str:
        return rewrite_for_simulator(real_url, self.portal_base_url)

    def circuit(self, source: str) -> CircuitSnapshot:
        """This process's own breaker state of one source (closed when it never failed). With
        shared circuits, `circuit_state` is the state requests are decided by."""
        return self.circuits.breaker(source).snapshot()

    async def circuit_state(self, source: str) -> CircuitSnapshot:
        """The breaker state requests on `source` are decided by: the one shared through Redis
        when configured and answering, else this process's own."""
        return await self.circuits.state(source)

    def _gate(self, real_url: str, policy: SourcePolicy) -> HostGate:
        # Keyed by the real host, not the simulator's: politeness is owed to the portal, and
        # every Accela agency on aca-prod.accela.com shares one host budget.
        host = urlsplit(real_url).netloc.lower()
        gate = self._gates.get(host)
        if gate is None:
            gate = HostGate(policy, host, self._shared_pacer)
            self._gates[host] = gate
        return gate

    # -- requests ----------------------------------------------------------------------------
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
        idempotent: bool | None = None,
        check_page: bool = False,
        cookies: httpx.Cookies | None = None,
    ) -> httpx.Response:
        """Send one logical request (with bounded retries) and return the final response.

        `idempotent` defaults to True for GET/HEAD/OPTIONS and False otherwise; pass True for a
        POST that only reads (an ArcGIS query). `check_page=True` runs `classify_page` on a 2xx
        body, so maintenance/error pages are retried like a 503 and walls raise Blocked.
        `cookies` is a per-conversation jar (WebForms sessions): when given, the request carries
        only that jar's cookies and the response's Set-Cookie lands in it, so concurrent lookups
        never share a portal session through the shared client.
        Raises RetryLater, Blocked or PortalChanged as the module docstring describes.
        """
        policy = self.policy(source)
        retries_allowed = method.upper() in IDEMPOTENT_METHODS if idempotent is None else idempotent
        attempts = policy.max_attempts if retries_allowed else 1
        body = _Body(params, data, json, headers, cookies)
        token = uuid.uuid4().hex  # names this request's claim on a shared half-open trial
        last_error: RetryLater | None = None
        for attempt in range(1, max(1, attempts) + 1):
            admission = await self.circuits.admit(source, token)
            if not admission.allowed:
                if last_error is not None:
                    raise last_error
                raise RetryLater(
                    source,
                    "circuit open after repeated failures; no request sent",
                    retry_after=admission.retry_in_seconds,
                    reason="circuit_open",
                )
            try:
                response = await self._attempt(source, method, real_url, policy, body, check_page)
            except _Retryable as failure:
                await self.circuits.record_failure(source)
                last_error = failure.error
                server_wait = failure.server_wait or 0.0
                if attempt >= attempts or server_wait > policy.max_retry_wait_seconds:
                    raise failure.error from None
                await self._sleep(policy.backoff(attempt, server_wait))
                continue
            except RetryLater:
                await self.circuits.record_failure(source)  # 403 throttling: no retry
                raise
            except Exception:
                # Blocked, PortalChanged: nothing learned about availability.
                await self.circuits.record_neutral(source, admission, token)
                raise
            except BaseException:
                self.circuits.record_cancelled(source, admission, token)
                raise
            await self.circuits.record_success(source)
            return response
        assert last_error is not None  # the loop either returns or raises
        raise last_error

    async def _attempt(
        self,
        source: str,
        method: str,
        real_url: str,
        policy: SourcePolicy,
        body: _Body,
        check_page: bool,
    ) -> httpx.Response:
        async with self._gate(real_url, policy).slot():
            try:
                response = await self._send(method, self.url(real_url), policy, body)
            except httpx.TimeoutException as exc:
                raise _Retryable(_retry_later(source, "timeout", f"timed out ({exc!r})")) from exc
            except httpx.TransportError as exc:
                error = _retry_later(source, "down", f"connection failed ({exc!r})")
                raise _Retryable(error) from exc
            except _TooLarge as exc:
                raise PortalChanged(
                    source, f"response exceeds {policy.max_response_bytes} bytes"
                ) from exc
        return self._judge(source, response, check_page)

    async def _send(
        self,
        method: str,
        url: str,
        policy: SourcePolicy,
        body: _Body,
    ) -> httpx.Response:
        request = self._client.build_request(
            method,
            url,
            params=body.params,
            data=body.data,
            json=body.json,
            headers=body.headers,
            timeout=httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout),
        )
        if body.cookies is not None:
            # build_request merged the client-wide jar; replace it with the conversation's own.
            request.headers.pop("Cookie", None)
            body.cookies.set_cookie_header(request)
        response = await self._client.send(request, stream=True)
        if body.cookies is not None:
            body.cookies.extract_cookies(response)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > policy.max_response_bytes:
                raise _TooLarge
            content = bytearray()
            async for chunk in response.aiter_bytes():
                content.extend(chunk)
                if len(content) > policy.max_response_bytes:
                    raise _TooLarge
        finally:
            await response.aclose()
        # The body is already decoded: drop the framing headers that described the wire bytes.
        # Raw bytes: a header value outside ASCII (a portal's `Retry-After: \xb2`) must not
        # fail to encode again.
        kept = [
            (name, value)
            for name, value in response.headers.raw
            if name.lower() not in {b"content-encoding", b"content-length", b"transfer-encoding"}
        ]
        return httpx.Response(
            response.status_code,
            headers=kept,
            content=bytes(content),
            request=request,
            extensions=response.extensions,
        )

    def _judge(self, source: str, response: httpx.Response, check_page: bool) -> httpx.Response:
        status = response.status_code
        if response.is_redirect:
            classify_url(source, response.headers.get("location"))
            return response
        if status in (403, 429, 500, 502, 503, 504):
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if status in (403, 503):
                # A wall or a maintenance page can come with these codes; name it precisely.
                try:
                    classify_page(source, response.text, url=str(response.url))
                except RetryLater as error:
                    if retry_after is not None:
                        error.retry_after = retry_after
                    raise _Retryable(error, retry_after) from None
            reason = {403: "throttled", 429: "throttled", 500: "server_error", 504: "timeout"}.get(
                status, "down"
            )
            failure = _retry_later(source, reason, f"HTTP {status}", retry_after)
            if status == 403:
                # Throttling by 403 is a request to back off: never hammer it in-request.
                raise failure
            raise _Retryable(failure, retry_after)
        if check_page and 200 <= status < 300:
            try:
                classify_page(source, response.text, url=str(response.url))
            except RetryLater as error:
                raise _Retryable(error) from None
        return response

    async def aclose(self) -> None:
        await self._client.aclose()
        await self.circuits.aclose()
        if self._shared_pacer is not None:
            await self._shared_pacer.aclose()


class _TooLarge(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Body:
    params: Mapping[str, Any] | None
    data: Mapping[str, Any] | None
    json: Any
    headers: Mapping[str, str] | None
    cookies: httpx.Cookies | None


def _retry_later(
    source: str, reason: str, message: str, retry_after: float | None = None
) -> RetryLater:
    return RetryLater(
        source,
        message,
        retry_after=retry_after if retry_after is not None else DEFAULT_RETRY_AFTER[reason],
        reason=reason,
    )
