"""The browser engine against a tiny portal of its own (served through PortalHttp like every
portal): parser-irrelevant resources are never requested, each read has a fresh context, a page
that never settles hits the hard deadline, a script challenge that never passes is Blocked."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from permitapi.sources.base import Blocked, RetryLater
from permitapi.sources.browser.engine import BrowserEngine
from tests.support.portal_http import in_process_http

PORTAL = "https://portal.test"
PAGE = """<html><head>
<link rel="stylesheet" href="/style.css">
<script src="https://www.google-analytics.com/analytics.js"></script>
<script src="/app.js"></script></head>
<body><img src="/logo.png"><div id="out">Loading record...</div></body></html>"""
APP_JS = """
document.addEventListener("DOMContentLoaded", function () {
  var seen = document.cookie || "none";
  document.cookie = "visited=yes; path=/";
  document.getElementById("out").textContent =
    "Record 42 cookies before: " + seen + " " + "x".repeat(400);
});
"""
FOREVER_SHELL = "<html><body><div>Loading record...</div><script>1</script></body></html>"
CHALLENGE = (
    "<html><head><title>Just a moment...</title></head><body><script></script></body></html>"
)


@pytest.fixture
def hits() -> Counter[str]:
    return Counter()


@pytest.fixture
async def engine(hits: Counter[str]) -> AsyncIterator[BrowserEngine]:
    async def serve(request: Request) -> Response:
        path = request.url.path.removeprefix("/portal.test")
        hits[path] += 1
        if path == "/app.js":
            return Response(APP_JS, media_type="application/javascript")
        pages = {"/page": PAGE, "/shell": FOREVER_SHELL, "/challenge": CHALLENGE}
        return HTMLResponse(pages.get(path, "not here"), 200 if path in pages else 404)

    app = Starlette(routes=[Route("/portal.test/{rest:path}", serve)])
    http = in_process_http(app, "http://portalsim.test")
    browser = BrowserEngine(http, pool_size=1, page_timeout=3.0)
    yield browser
    await browser.aclose()
    await http.aclose()


async def test_only_what_a_parser_needs_is_requested_and_contexts_are_fresh(
    engine: BrowserEngine, hits: Counter[str]
) -> None:
    first = await engine.read("test", f"{PORTAL}/page")
    assert "Record 42 cookies before: none" in first.html
    second = await engine.read("test", f"{PORTAL}/page")
    # The first read's script set a cookie; the second read's context never saw it.
    assert "Record 42 cookies before: none" in second.html
    assert hits == Counter({"/page": 2, "/app.js": 2})  # no style sheet, image or analytics


async def test_a_page_that_never_settles_hits_the_hard_deadline(engine: BrowserEngine) -> None:
    with pytest.raises(RetryLater, match="did not settle within 3 s") as caught:
        await engine.read("test", f"{PORTAL}/shell")
    assert caught.value.reason == "timeout"
    assert engine.open_pages == 0


async def test_a_script_challenge_that_never_passes_is_blocked(engine: BrowserEngine) -> None:
    with pytest.raises(Blocked, match="script challenge"):
        await engine.read("test", f"{PORTAL}/challenge")


async def test_a_missing_page_is_read_as_what_the_portal_said(engine: BrowserEngine) -> None:
    page = await engine.read("test", f"{PORTAL}/nowhere")
    assert "not here" in page.html
