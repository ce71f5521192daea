"""The browser path end to end against the simulator: script-only record pages read in headless
Chromium, plain ones over HTTP; the page pool bound; walls Blocked on both paths; no browser
means HTTP (said once)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys

import pytest

from permitapi.portalsim.page_modes import PageModes
from permitapi.portalsim.store import Fault, SimStore
from permitapi.sources.aca import urls
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.base import Blocked, PermitSnapshot, PortalChanged
from permitapi.sources.browser.engine import BrowserEngine
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory, Jurisdiction
from tests.sources.browser.conftest import PLAIN, SCRIPTED

EXCLUDED = {"field_sources", "source_url"}


def _fields(snapshot: PermitSnapshot) -> dict[str, object]:
    return {
        f.name: getattr(snapshot, f.name)
        for f in dataclasses.fields(snapshot)
        if f.name not in EXCLUDED
    }


def _jurisdiction(directory: Directory, slug: str, fetch: str | None = None) -> Jurisdiction:
    found = directory.get(slug)
    assert found is not None
    return dataclasses.replace(found, fetch=fetch) if fetch else found


def _with_inspections(store: SimStore, slug: str) -> PermitSnapshot:
    return next(p for p in store.of(slug) if p.inspections and p.issued_date)


async def test_script_only_record_is_read_by_the_browser_and_complete(
    adapter: AcaAdapter, engine: BrowserEngine, reader: PageReader, store: SimStore,
    directory: Directory,
) -> None:  # fmt: skip
    jurisdiction = _jurisdiction(directory, SCRIPTED)
    assert jurisdiction.fetch == "auto"
    truth = _with_inspections(store, SCRIPTED)
    got = await adapter.fetch_permit(jurisdiction, truth.permit_number)
    assert _fields(got) == _fields(truth)
    assert got.inspections  # status, dates and inspections all came through the browser
    assert engine.pages_read == 1
    assert reader.remembered(SCRIPTED)
    # Remembered: the next record of this jurisdiction goes to the browser without HTTP first.
    other = next(p for p in store.of(SCRIPTED) if p.permit_number != truth.permit_number)
    store.reset_stats()
    again = await adapter.fetch_permit(jurisdiction, other.permit_number)
    assert _fields(again) == _fields(other)
    assert engine.pages_read == 2


async def test_plain_jurisdiction_stays_on_http(
    adapter: AcaAdapter, engine: BrowserEngine, reader: PageReader, store: SimStore,
    directory: Directory,
) -> None:  # fmt: skip
    truth = _with_inspections(store, PLAIN)
    got = await adapter.fetch_permit(_jurisdiction(directory, PLAIN), truth.permit_number)
    assert _fields(got) == _fields(truth)
    assert engine.pages_read == 0
    assert engine.peak_pages == 0
    assert not reader.remembered(PLAIN)


async def test_same_jurisdiction_without_script_only_mode_stays_on_http(
    adapter: AcaAdapter, engine: BrowserEngine, modes: PageModes, store: SimStore,
    directory: Directory,
) -> None:  # fmt: skip
    modes.script_only.discard(SCRIPTED)
    truth = _with_inspections(store, SCRIPTED)
    got = await adapter.fetch_permit(_jurisdiction(directory, SCRIPTED), truth.permit_number)
    assert _fields(got) == _fields(truth)
    assert engine.pages_read == 0


async def test_fetch_http_never_uses_the_browser_and_reports_the_shell(
    adapter: AcaAdapter, engine: BrowserEngine, store: SimStore, directory: Directory
) -> None:
    truth = _with_inspections(store, SCRIPTED)
    with pytest.raises(PortalChanged, match="CapDetail answered"):
        await adapter.fetch_permit(_jurisdiction(directory, SCRIPTED, "http"), truth.permit_number)
    assert engine.pages_read == 0


async def test_fetch_browser_reads_plain_pages_in_the_browser(
    adapter: AcaAdapter, engine: BrowserEngine, store: SimStore, directory: Directory
) -> None:
    truth = _with_inspections(store, PLAIN)
    got = await adapter.fetch_permit(
        _jurisdiction(directory, PLAIN, "browser"), truth.permit_number
    )
    assert _fields(got) == _fields(truth)
    assert engine.pages_read == 1


async def test_twenty_concurrent_misses_never_open_more_pages_than_the_pool(
    adapter: AcaAdapter, engine: BrowserEngine, store: SimStore, directory: Directory
) -> None:
    jurisdiction = _jurisdiction(directory, SCRIPTED, "browser")
    permits = store.of(SCRIPTED)[:20]
    assert len(permits) == 20
    got = await asyncio.gather(
        *(adapter.fetch_permit(jurisdiction, p.permit_number) for p in permits)
    )
    assert [g.permit_number for g in got] == [p.permit_number for p in permits]
    assert [g.raw_status for g in got] == [p.raw_status for p in permits]
    assert engine.pages_read == 20
    assert engine.peak_pages == engine.pool_size == 2
    assert engine.open_pages == 0


async def test_login_wall_is_blocked_on_both_paths(
    adapter: AcaAdapter, engine: BrowserEngine, store: SimStore, directory: Directory
) -> None:
    truth = store.of(SCRIPTED)[0]
    got = await adapter.fetch_permit(_jurisdiction(directory, SCRIPTED), truth.permit_number)
    assert got.source_url is not None
    # HTTP path: the portal redirects to Login.aspx.
    store.add_fault(Fault(source=PLAIN, mode="blocked"))
    with pytest.raises(Blocked, match=r"[Ll]ogin"):
        await adapter.fetch_permit(
            _jurisdiction(directory, PLAIN), store.of(PLAIN)[0].permit_number
        )
    # Browser path: the record page redirects to the login page ...
    store.add_fault(Fault(source=SCRIPTED, mode="blocked"))
    with pytest.raises(Blocked, match=r"login"):
        await engine.read(SCRIPTED, got.source_url)
    # ... and the login page itself, as the browser renders it.
    store.clear_faults()
    login = urls.base_url(_jurisdiction(directory, SCRIPTED)) + "/Login.aspx"
    with pytest.raises(Blocked, match=r"login page \(browser\)"):
        await engine.read(SCRIPTED, login)


async def test_without_playwright_the_process_says_so_once_and_reads_over_http(
    http: PortalHttp, store: SimStore, directory: Directory, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)  # import fails
    engine = BrowserEngine(http)
    adapter = AcaAdapter(http, PageReader(engine))
    with caplog.at_level(logging.WARNING, logger="permitapi.sources.browser.engine"):
        for permit in store.of(SCRIPTED)[:2]:
            with pytest.raises(PortalChanged):
                await adapter.fetch_permit(_jurisdiction(directory, SCRIPTED), permit.permit_number)
        truth = _with_inspections(store, PLAIN)
        got = await adapter.fetch_permit(
            _jurisdiction(directory, PLAIN, "browser"), truth.permit_number
        )
    assert _fields(got) == _fields(truth)  # fetch = "browser" without a browser: HTTP
    warnings = [r for r in caplog.records if "browser-backed fetching unavailable" in r.message]
    assert len(warnings) == 1
    assert "Playwright is not installed" in warnings[0].message
    assert not engine.available()


async def test_without_chromium_the_process_reads_over_http(
    http: PortalHttp, store: SimStore, directory: Directory
) -> None:
    engine = BrowserEngine(http, executable="no-such-chromium-binary")
    adapter = AcaAdapter(http, PageReader(engine))
    truth = _with_inspections(store, PLAIN)
    got = await adapter.fetch_permit(
        _jurisdiction(directory, PLAIN, "browser"), truth.permit_number
    )
    assert _fields(got) == _fields(truth)
    assert not engine.available()
    assert engine.pages_read == 0
