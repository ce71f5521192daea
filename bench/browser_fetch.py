"""The cost of reading one record page in headless Chromium against plain HTTP, same record,
same in-process simulator page, same PortalHttp (the browser's requests go through it too).

Three figures per record, each the median of `--n` sequential reads (portal latency 0, so the
figures are our own cost): HTTP GET of the CapDetail page; the browser reading that plain page
(a new context and page per read, as lookups do); the browser reading the page when the
simulator serves it script-only (the shell, its script, the fetch of the content). The last
line is the ratio of the script-only browser read to the HTTP read.

    python bench/browser_fetch.py [--n 30]
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import date

from harness import arguments, in_process_http
from permitapi.portalsim.app import create_sim_app
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.browser.engine import BrowserEngine
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.families import SIMULATORS
from permitapi.sources.registry import default_directory

SLUG = "aca:sandiego"


async def median_ms(n: int, read: Callable[[], Awaitable[object]]) -> float:
    await read()  # warm: connection, browser start
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def measure(n: int) -> tuple[float, float, float]:
    directory = default_directory()
    sim = create_sim_app(
        directory,
        permits_per_jurisdiction=10,
        latency_ms=0,
        today=date(2026, 11, 22),
        families={"aca": SIMULATORS["aca"]},
    )
    http = in_process_http(sim, "http://portalsim.test")
    engine = BrowserEngine(http, pool_size=1)
    try:
        jurisdiction = directory.get(SLUG)
        assert jurisdiction is not None
        permit = sim.state.store.of(SLUG)[0]
        record = await AcaAdapter(http, PageReader(None)).fetch_permit(
            jurisdiction, permit.permit_number
        )
        url = record.source_url
        assert url is not None

        async def over_http() -> object:
            return await http.request(SLUG, "GET", url)

        async def in_browser() -> object:
            return await engine.read(SLUG, url)

        http_ms = await median_ms(n, over_http)
        browser_ms = await median_ms(n, in_browser)
        sim.state.page_modes.script_only.add(SLUG)
        scripted_ms = await median_ms(n, in_browser)
        return http_ms, browser_ms, scripted_ms
    finally:
        await engine.aclose()
        await http.aclose()


def main() -> None:
    args = arguments(__doc__ or "")
    http_ms, browser_ms, scripted_ms = asyncio.run(measure(args.n))
    print(f"record page, median of {args.n} reads each, portal latency 0")
    print(f"http fetch:                  {http_ms:8.1f} ms")
    print(f"browser, plain page:         {browser_ms:8.1f} ms  ({browser_ms / http_ms:.1f}x http)")
    print(f"browser, script-only page:   {scripted_ms:8.1f} ms")
    print(
        f"browser_fetch: {scripted_ms / http_ms:.1f}x an HTTP fetch of the same record "
        "(target none: the cost a browser-backed read adds, to budget pool size by)"
    )


if __name__ == "__main__":
    main()
