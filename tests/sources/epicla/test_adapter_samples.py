"""The adapter's snapshot rules on real EPIC-LA records, served as ArcGIS query answers.

EnerGov is answered with HTTP 500 (what EnerGov does without a valid tenant): the lookup must
still succeed with workflow and inspections "not observed".
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from permitapi.sources.base import NormalizedStatus, NotFoundAtSource, PortalChanged
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction, default_directory
from tests.sources.epicla import samples

ALL_CASES = {
    number: case for ain in samples.AIN_FILES for number, case in samples.cases(ain).items()
}


@pytest.fixture
def epicla() -> Jurisdiction:
    jurisdiction = default_directory().get("epicla")
    assert jurisdiction is not None
    return jurisdiction


def make_adapter(arcgis_answer: Any = None) -> tuple[EpicLaAdapter, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "epicla.lacounty.gov":
            return httpx.Response(500, text="Internal Server Error")
        if arcgis_answer is not None:
            return httpx.Response(200, content=arcgis_answer)
        where = unquote(request.url.params["where"])
        number = re.fullmatch(r"CASENUMBER='(.+)'", where)
        assert number is not None
        found = [ALL_CASES[number[1]]] if number[1] in ALL_CASES else []
        return httpx.Response(200, json=samples.query_response(*found))

    http = PortalHttp(portal_base_url=None, transport=httpx.MockTransport(handler))
    return EpicLaAdapter(http), seen


async def test_finaled_sample_drops_the_moot_expiry(epicla: Jurisdiction) -> None:
    adapter, seen = make_adapter()
    snap = await adapter.fetch_permit(epicla, "unc-bldr250228002138")
    assert snap.permit_number == "UNC-BLDR250228002138"
    assert snap.raw_status == "Finaled"
    assert snap.status is NormalizedStatus.FINALED
    assert snap.finaled_date == date(2026, 3, 11)
    assert snap.status_date == date(2026, 3, 11)
    assert snap.expires_date is None  # EXPIRE_DATE 2026-06-03 is published but moot
    assert snap.issued_date == date(2025, 6, 3)
    assert snap.applied_date == date(2025, 2, 28)
    assert snap.valuation == 657000.0
    assert snap.parcel == "5842024014"
    assert snap.address == "3458 Monterosa Drive, Altadena CA 91001"
    assert snap.permit_type == "Unincorporated Building Residential"
    # EnerGov answered 500: detail not observed, lookup still complete.
    assert snap.workflow is None
    assert snap.inspections is None
    assert snap.pending_inspections is None
    assert snap.timeline is None
    assert snap.conditions is None
    assert set(snap.field_sources) >= {"status", "finaled_date", "latitude", "parcel"}
    assert "workflow" not in snap.field_sources
    # CASEID is in this layer, so the SPA link is known and no EnerGov search was needed.
    assert snap.source_url is not None
    assert snap.source_url.endswith("/#/permit/cb402aa9-a97a-42da-b3de-f405247c8462")
    query = seen[0].url.params
    assert query["where"] == "CASENUMBER='UNC-BLDR250228002138'"
    assert (query["outFields"], query["returnGeometry"], query["outSR"], query["f"]) == (
        "*", "true", "4326", "json",
    )  # fmt: skip
    assert [r.url.path.rsplit("/", 1)[-1] for r in seen[1:]] == ["workflow", "inspections"]
    assert all(r.headers.get("tenantId") == "1" for r in seen[1:])


async def test_issued_with_inspection_and_open_plan(epicla: Jurisdiction) -> None:
    adapter, _ = make_adapter()
    permit = await adapter.fetch_permit(epicla, "UNC-BLDR250827010774")
    assert permit.status is NormalizedStatus.INSPECTIONS
    assert permit.status_date == date(2026, 1, 9)
    assert permit.expires_date == date(2027, 1, 9)
    assert permit.finaled_date is None
    assert permit.latitude == pytest.approx(34.19845532744096)

    plan = await adapter.fetch_permit(epicla, "CREC2025001239")
    assert plan.status is NormalizedStatus.IN_REVIEW
    assert plan.status_date is None
    assert plan.valuation is None
    assert plan.source_url is not None
    assert "/#/plan/" in plan.source_url

    creb = await adapter.fetch_permit(epicla, "CREB2025000372")
    assert creb.status is NormalizedStatus.APPROVED_PENDING_ISSUE
    assert (creb.work_description or "").count("\n") == 3


async def test_zero_features_is_not_found(epicla: Jurisdiction) -> None:
    adapter, _ = make_adapter()
    with pytest.raises(NotFoundAtSource):
        await adapter.fetch_permit(epicla, "UNC-BLDR250101999999")


async def test_error_envelope_with_http_200_is_portal_changed(epicla: Jurisdiction) -> None:
    adapter, _ = make_adapter(samples.ERROR_ENVELOPE.read_bytes())
    with pytest.raises(PortalChanged):
        await adapter.fetch_permit(epicla, "UNC-BLDR250228002138")
    probe = await adapter.health(epicla)
    assert not probe.ok
    assert "PortalChanged" in probe.detail


async def test_malformed_json_is_portal_changed(epicla: Jurisdiction) -> None:
    adapter, _ = make_adapter(b'{"features": [')
    with pytest.raises(PortalChanged):
        await adapter.fetch_permit(epicla, "UNC-BLDR250228002138")
