"""Which path reads a jurisdiction's record page: plain HTTP or the browser.

Per jurisdiction (`fetch` in the directory):
    http     always HTTP (a shell page stays unreadable: the parser reports PortalChanged)
    browser  always the browser
    auto     HTTP while HTTP can complete the record; when the page classifier sees what HTTP
             cannot get past (an empty shell only script fills, a script challenge) the page is
             read again by the browser, and the jurisdiction is remembered as needing it for
             `remember_seconds`, after which HTTP is tried again
A process without a browser (no Playwright, no Chromium, `browser_enabled` off) reads every
page over HTTP; the engine says so once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from permitapi.config import Settings
from permitapi.sources.browser.engine import BrowserEngine, RenderedPage
from permitapi.sources.browser.verdict import judge_page
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction

DEFAULT_REMEMBER_SECONDS = 3600.0


class PageReader:
    def __init__(
        self,
        engine: BrowserEngine | None = None,
        *,
        remember_seconds: float = DEFAULT_REMEMBER_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.remember_seconds = remember_seconds
        self._monotonic = monotonic
        self._needs_browser_until: dict[str, float] = {}

    async def _ready(self) -> bool:
        """A browser is there (started on first need; False, said once, when it cannot be)."""
        return self.engine is not None and await self.engine.ensure_started()

    async def browser_first(self, jurisdiction: Jurisdiction) -> bool:
        """Read this jurisdiction's record page with the browser without trying HTTP first."""
        if jurisdiction.fetch == "browser":
            return await self._ready()
        return (
            jurisdiction.fetch == "auto"
            and self.remembered(jurisdiction.slug)
            and (await self._ready())
        )

    async def browser_after(self, jurisdiction: Jurisdiction, html: str) -> bool:
        """HTTP read this page and the parser did not find its record: read it with the
        browser instead? Yes in auto mode when the page needs script (then remembered)."""
        if jurisdiction.fetch != "auto":
            return False
        if not judge_page(html, source=jurisdiction.slug).needs_browser:
            return False
        if not await self._ready():
            return False
        self._needs_browser_until[jurisdiction.slug] = self._monotonic() + self.remember_seconds
        return True

    def remembered(self, slug: str) -> bool:
        """HTTP met a page only script fills here less than `remember_seconds` ago."""
        until = self._needs_browser_until.get(slug)
        if until is not None and self._monotonic() >= until:
            del self._needs_browser_until[slug]
            return False
        return until is not None

    async def read(
        self, jurisdiction: Jurisdiction, url: str, *, cookies: httpx.Cookies | None = None
    ) -> RenderedPage:
        assert self.engine is not None  # callers asked browser_first/browser_after first
        return await self.engine.read(jurisdiction.slug, url, cookies=cookies)

    async def aclose(self) -> None:
        if self.engine is not None:
            await self.engine.aclose()


def page_reader(settings: Settings, http: PortalHttp) -> PageReader:
    """The process's reader: with a browser engine unless `browser_enabled` is off (the browser
    itself starts on first need)."""
    engine = (
        BrowserEngine(
            http,
            pool_size=settings.browser_pages,
            page_timeout=settings.browser_page_timeout_seconds,
            executable=settings.browser_executable,
        )
        if settings.browser_enabled
        else None
    )
    return PageReader(engine, remember_seconds=settings.browser_remember_seconds)
