"""ACA failure modes through the simulator: each becomes the right typed error."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette

from permitapi.portalsim.store import Fault, SimStore
from permitapi.sources.aca import urls
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.base import (
    Blocked,
    NotFoundAtSource,
    RetryLater,
    SearchCriteria,
    SearchNotSupported,
)
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory, Jurisdiction
from tests.sources.aca.conftest import SIM_BASE
from tests.support.portal_http import TEST_POLICY


def agency(directory: Directory, slug: str = "aca:sandiego") -> Jurisdiction:
    jurisdiction = directory.get(slug)
    assert jurisdiction is not None
    return jurisdiction


async def test_blocked_fault_is_a_login_redirect(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    store.add_fault(Fault("aca:sandiego", "blocked"))
    number = store.of("aca:sandiego")[0].permit_number
    with pytest.raises(Blocked, match=r"Login\.aspx"):
        await adapter.fetch_permit(agency(directory), number)


async def test_maintenance_page_is_retry_later(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    store.add_fault(Fault("aca:sandiego", "maintenance"))
    with pytest.raises(RetryLater) as caught:
        await adapter.fetch_permit(agency(directory), store.of("aca:sandiego")[0].permit_number)
    assert caught.value.reason == "maintenance"


@pytest.mark.parametrize(("mode", "reason"), [("down", "down"), ("error", "server_error")])
async def test_outages_are_retry_later(
    mode: str, reason: str, adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    store.add_fault(Fault("aca:sandiego", mode))  # type: ignore[arg-type]
    with pytest.raises(RetryLater) as caught:
        await adapter.fetch_permit(agency(directory), store.of("aca:sandiego")[0].permit_number)
    assert caught.value.reason == reason


async def test_timeout_is_retry_later(
    sim_app: Starlette, store: SimStore, directory: Directory
) -> None:
    store.add_fault(Fault("aca:sandiego", "timeout", latency_ms=2_000))
    http = PortalHttp(
        portal_base_url=SIM_BASE,
        transport=httpx.ASGITransport(app=sim_app),
        policies={
            "aca:sandiego": TEST_POLICY.with_overrides(
                {"read_timeout": 0.2, "connect_timeout": 0.2}
            )
        },
    )
    try:
        with pytest.raises(RetryLater) as caught:
            await AcaAdapter(http).fetch_permit(agency(directory), "PRJ-0000000")
    finally:
        await http.aclose()
    assert caught.value.reason in ("timeout", "down")


async def test_unknown_number_is_not_found(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    with pytest.raises(NotFoundAtSource):
        await adapter.fetch_permit(agency(directory), "ZZZ-9999999")
    assert store.requests["aca:sandiego"] == 2  # CapHome GET + search POST, nothing more


async def test_prefix_of_one_other_record_is_not_found(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    # ACA's search is a prefix match: one hit for a shorter number redirects to that record.
    truth = store.of("aca:sandiego")[0]
    shorter = truth.permit_number[:-1]
    others = [p for p in store.of("aca:sandiego") if p.permit_number.startswith(shorter)]
    if len(others) != 1 or store.get("aca:sandiego", shorter) is not None:
        pytest.skip("generated data has siblings for this prefix")
    with pytest.raises(NotFoundAtSource):
        await adapter.fetch_permit(agency(directory), shorter)


async def test_postback_without_referer_gets_the_csrf_page(
    http: PortalHttp, directory: Directory
) -> None:
    """The simulator refuses a search POST without Referer/Origin, as ACA does."""
    jurisdiction = agency(directory)
    jar = httpx.Cookies()
    home = await http.request("aca:sandiego", "GET", urls.caphome_url(jurisdiction), cookies=jar)
    assert home.status_code == 200
    refused = await http.request(
        "aca:sandiego",
        "POST",
        urls.caphome_url(jurisdiction),
        data={"__EVENTTARGET": "ctl00$PlaceHolderMain$btnNewSearch"},
        cookies=jar,
    )
    assert refused.status_code == 200
    assert "Potential cross-site request forgery" in refused.text


async def test_adapter_always_sends_same_origin_referer(
    sim_app: Starlette, store: SimStore, directory: Directory
) -> None:
    seen: list[tuple[str, str | None, str | None]] = []

    class Spy(httpx.ASGITransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            seen.append(
                (request.method, request.headers.get("referer"), request.headers.get("origin"))
            )
            return await super().handle_async_request(request)

    http = PortalHttp(
        portal_base_url=SIM_BASE, transport=Spy(app=sim_app), default_policy=TEST_POLICY
    )
    try:
        number = store.of("aca:sandiego")[3].permit_number
        await AcaAdapter(http).fetch_permit(agency(directory), number)
    finally:
        await http.aclose()
    posts = [entry for entry in seen if entry[0] == "POST"]
    assert len(posts) >= 2  # the search and GetProcessingData
    for _, referer, origin in posts:
        assert referer is not None
        assert referer.startswith("https://aca-prod.accela.com/SANDIEGO/")
        assert origin == "https://aca-prod.accela.com"


async def test_expired_session_is_retried_once_then_retry_later(
    adapter: AcaAdapter, store: SimStore, directory: Directory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from permitapi.portalsim.aca import routes

    monkeypatch.setattr(routes, "_token", lambda session, purpose: "rotated-" + purpose)
    # Tokens rendered and checked now agree, so a lookup still works...
    truth = store.of("aca:sandiego")[0]
    got = await adapter.fetch_permit(agency(directory), truth.permit_number)
    assert got.permit_number == truth.permit_number
    # ...but when validation disagrees with what was rendered, ACA answers Error.aspx.
    calls = iter(range(1_000))
    monkeypatch.setattr(routes, "_token", lambda session, purpose: f"t{next(calls)}")
    before = store.requests["aca:sandiego"]
    with pytest.raises(RetryLater) as caught:
        await adapter.fetch_permit(agency(directory), truth.permit_number)
    assert caught.value.reason == "portal_error"
    # Two attempts of CapHome GET + search POST; the Error.aspx redirect is not followed.
    assert store.requests["aca:sandiego"] - before == 4


async def test_search_is_not_supported(adapter: AcaAdapter, directory: Directory) -> None:
    with pytest.raises(SearchNotSupported):
        await adapter.search(agency(directory), SearchCriteria(zip="92101"))


async def test_health(adapter: AcaAdapter, store: SimStore, directory: Directory) -> None:
    probe = await adapter.health(agency(directory, "aca:fresno"))
    assert probe.ok, probe.detail
    store.add_fault(Fault("aca:fresno", "maintenance"))
    probe = await adapter.health(agency(directory, "aca:fresno"))
    assert not probe.ok
    assert "maintenance" in probe.detail


async def test_grid_paging_finds_a_record_on_a_later_page(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    import dataclasses
    from datetime import date, timedelta

    base = store.of("aca:sandiego")[0]
    family = [
        dataclasses.replace(
            base, permit_number=f"BLD26-000{n:02d}", applied_date=date(2026, 1, 1) + timedelta(n)
        )
        for n in range(24)
    ]
    # The oldest record of 25 that all start with "BLD26-000": newest first, 10 a page, so
    # the search lists it last, on page 3, reached by two "Next >" postbacks.
    target = dataclasses.replace(base, permit_number="BLD26-000", applied_date=date(2025, 6, 1))
    for permit in [*family, target]:
        store.put(permit)
    before = store.requests["aca:sandiego"]
    got = await adapter.fetch_permit(agency(directory), "BLD26-000")
    assert got.permit_number == "BLD26-000"
    assert got.applied_date == date(2025, 6, 1)
    assert "CapHome.aspx" in got.field_sources["applied_date"]  # read from the grid row
    # CapHome, search, 2 pager postbacks, CapDetail, GetProcessingData, inspection postback.
    assert store.requests["aca:sandiego"] - before == 7
