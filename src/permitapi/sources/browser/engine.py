"""Playwright driving the system's Chromium, as a fetcher of single pages.

One `BrowserEngine` per process. `read(source, url, cookies=...)` opens a new browser context
(no cookies or storage shared between lookups; the conversation's own cookie jar is), one page in
it, navigates, waits until the page classifier no longer sees a shell or a script challenge, and
returns the rendered DOM. At most `pool_size` pages are open at once (others wait their turn);
every read has a hard deadline (`page_timeout`).

The browser never reaches the network itself: every request the page makes is intercepted and
sent through `PortalHttp` (documents, scripts, XHR/fetch), so politeness, per-host pacing, the
circuit breaker, simulator rewriting, size caps and typed errors are those of the HTTP path.
Images, fonts, media, style sheets and analytics hosts are refused before any request.
A routed request that ends in a typed error (a login redirect is `Blocked`, an outage
`RetryLater`) aborts the page and that error is what `read` raises.

Availability: Playwright is an optional extra and Chromium a system package; when either is
missing `available()` is False, said once in the log, and callers read over HTTP instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx
import orjson

from permitapi.sources.base import Blocked, PortalChanged, RetryLater, SourceError
from permitapi.sources.browser.verdict import PageNeed, judge_page
from permitapi.sources.http import PortalHttp

log = logging.getLogger(__name__)

BLOCKED_RESOURCES = frozenset({"image", "font", "media", "stylesheet", "manifest", "texttrack"})
ANALYTICS_HOSTS = (
    "google-analytics.com",
    "googletagmanager.com",
    "doubleclick.net",
    "hotjar.com",
    "newrelic.com",
    "nr-data.net",
    "clarity.ms",
    "segment.io",
)
FORWARDED_HEADERS = frozenset(
    {"accept", "accept-language", "referer", "origin", "x-requested-with", "content-type"}
)
MAX_ROUTED_REDIRECTS = 5
SETTLE_POLL_SECONDS = 0.05
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


@dataclass(frozen=True, slots=True)
class RenderedPage:
    url: str  # the real URL asked for
    html: str  # the DOM after script ran


@dataclass(slots=True)
class _Conversation:
    source: str
    cookies: httpx.Cookies
    failure: SourceError | None = None
    last_need: PageNeed | None = None  # what the classifier last said of the page


def find_chromium(configured: str | None) -> str | None:
    if configured:
        return configured if shutil.which(configured) or _exists(configured) else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def _exists(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


class BrowserEngine:
    def __init__(
        self,
        http: PortalHttp,
        *,
        pool_size: int = 2,
        page_timeout: float = 30.0,
        executable: str | None = None,
    ) -> None:
        if pool_size < 1:
            raise ValueError("a browser pool needs at least one page")
        self.http = http
        self.pool_size = pool_size
        self.page_timeout = page_timeout
        self._executable = executable
        self._slots = asyncio.Semaphore(pool_size)
        self._start_lock = asyncio.Lock()
        self._playwright: Any = None
        self._browser: Any = None
        self._unavailable: str | None = None
        # Observed, for tests, benches and logs: pages open now, the most ever open at once,
        # and how many pages were read.
        self.open_pages = 0
        self.peak_pages = 0
        self.pages_read = 0

    # -- availability ----------------------------------------------------------------------
    def available(self) -> bool:
        """False once starting the browser failed (no Playwright, no Chromium)."""
        return self._unavailable is None

    async def ensure_started(self) -> bool:
        """Start Playwright and Chromium on first use; False (said once) when they cannot be."""
        if self._browser is not None:
            return True
        if self._unavailable is not None:
            return False
        async with self._start_lock:
            if self._browser is not None or self._unavailable is not None:
                return self._browser is not None
            try:
                self._browser = await self._launch()
            except Exception as exc:
                self._unavailable = f"{type(exc).__name__}: {exc}"
                log.warning(
                    "browser-backed fetching unavailable (%s); record pages are read over HTTP",
                    self._unavailable,
                )
                await self._stop_playwright()
                return False
        return True

    async def _launch(self) -> Any:
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:
            raise RuntimeError("Playwright is not installed (permitapi[browser])") from exc
        executable = find_chromium(self._executable)
        if executable is None:
            raise RuntimeError(f"no Chromium found ({self._executable or 'chromium on PATH'})")
        self._playwright = await async_playwright().start()
        return await self._playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"],
        )

    async def _stop_playwright(self) -> None:
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None

    async def aclose(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await self._browser.close()
            self._browser = None
        await self._stop_playwright()

    # -- reading ---------------------------------------------------------------------------
    async def read(
        self, source: str, url: str, *, cookies: httpx.Cookies | None = None
    ) -> RenderedPage:
        """The page at the real `url` after its script ran. Raises RetryLater (timeout, outage,
        no browser), Blocked (login wall, CAPTCHA, a challenge that never passes) or
        PortalChanged."""
        if not await self.ensure_started():
            raise RetryLater(source, "no browser available", retry_after=60.0, reason="down")
        talk = _Conversation(source, cookies if cookies is not None else httpx.Cookies())
        async with self._slots:
            try:
                async with asyncio.timeout(self.page_timeout):
                    return await self._read(talk, url)
            except TimeoutError:
                if talk.failure is not None:
                    raise talk.failure from None
                if talk.last_need is PageNeed.CHALLENGE:
                    raise Blocked(source, "a script challenge the browser did not pass") from None
                raise RetryLater(
                    source,
                    f"the page did not settle within {self.page_timeout:g} s",
                    retry_after=30.0,
                    reason="timeout",
                ) from None

    async def _read(self, talk: _Conversation, url: str) -> RenderedPage:
        try:
            context = await self._browser.new_context(
                java_script_enabled=True, service_workers="block", accept_downloads=False
            )
        except Exception as exc:
            # The browser process died: start a new one on the next read.
            log.warning("browser context failed (%s); the browser will be restarted", exc)
            await self.aclose()
            raise RetryLater(
                talk.source, f"browser failed ({exc})", retry_after=30.0, reason="down"
            ) from exc
        self.open_pages += 1
        self.peak_pages = max(self.peak_pages, self.open_pages)
        try:
            await context.route("**/*", lambda route: self._route(talk, route))
            page = await context.new_page()
            try:
                await page.goto(url, wait_until="load", timeout=self.page_timeout * 1000)
            except Exception as exc:
                if talk.failure is not None:
                    raise talk.failure from None
                raise RetryLater(
                    talk.source, f"navigation failed ({exc})", retry_after=30.0, reason="down"
                ) from exc
            html = await self._settled(page, talk)
            self.pages_read += 1
            return RenderedPage(url, html)
        finally:
            self.open_pages -= 1
            with contextlib.suppress(Exception):
                await context.close()

    async def _settled(self, page: Any, talk: _Conversation) -> str:
        """The DOM once it is no shell and no challenge (the deadline of `read` bounds this)."""
        while True:
            if talk.failure is not None:
                raise talk.failure
            html: str = await page.content()
            verdict = judge_page(html, source=talk.source)
            talk.last_need = verdict.need
            if verdict.need is PageNeed.BLOCKED:
                raise Blocked(talk.source, f"{verdict.reason} (browser)")
            if not verdict.needs_browser:
                return html
            await asyncio.sleep(SETTLE_POLL_SECONDS)

    async def _route(self, talk: _Conversation, route: Any) -> None:
        request = route.request
        host = urlsplit(request.url).netloc.lower()
        if (
            talk.failure is not None
            or request.resource_type in BLOCKED_RESOURCES
            or any(host == name or host.endswith("." + name) for name in ANALYTICS_HOSTS)
            or not request.url.startswith(("http://", "https://"))
        ):
            await route.abort("blockedbyclient")
            return
        try:
            response = await self._send(talk, request)
        except SourceError as failure:
            talk.failure = talk.failure or failure
            await _quietly(route.abort("failed"))
            return
        except Exception as exc:
            talk.failure = talk.failure or PortalChanged(
                talk.source, f"a page request could not be sent ({type(exc).__name__}: {exc})"
            )
            await _quietly(route.abort("failed"))
            return
        headers = {
            name: value
            for name, value in response.headers.items()
            if name.lower() not in {"content-length", "content-encoding", "transfer-encoding"}
        }
        # The read may have ended meanwhile (deadline, an error elsewhere): its context is gone.
        await _quietly(
            route.fulfill(status=response.status_code, headers=headers, body=response.content)
        )

    async def _send(self, talk: _Conversation, request: Any) -> httpx.Response:
        """One browser request through PortalHttp; redirects followed here (a login redirect is
        Blocked there), so the page sees the final answer."""
        method, url = request.method.upper(), request.url
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS}
        data, body = _body(request, headers.get("content-type", ""))
        for _ in range(MAX_ROUTED_REDIRECTS + 1):
            response = await self.http.request(
                talk.source,
                method,
                url,
                data=data,
                json=body,
                headers=headers,
                cookies=talk.cookies,
                idempotent=method == "GET",
            )
            if not response.is_redirect:
                return response
            url = urljoin(url, response.headers.get("location", ""))
            method, data, body = "GET", None, None
        raise PortalChanged(talk.source, f"redirect loop at {request.url}")


async def _quietly(step: Awaitable[None]) -> None:
    with contextlib.suppress(Exception):
        await step


def _body(request: Any, content_type: str) -> tuple[dict[str, str] | None, Any]:
    """The request body as PortalHttp takes it: a form as fields, JSON as a value."""
    raw: bytes | None = request.post_data_buffer
    if not raw:
        return None, None
    if "json" in content_type:
        return None, orjson.loads(raw)
    return dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)), None
