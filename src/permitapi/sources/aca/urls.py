"""Real ACA URLs for one agency. Hosted tenants live at `aca-prod.accela.com/<AGENCY>`,
self-hosted ones at their own base (e.g. `…/CitizenAccess`); the paths below are the same."""

from __future__ import annotations

from urllib.parse import urlencode, urljoin, urlsplit

from permitapi.sources.aca.results import CapId
from permitapi.sources.registry import Jurisdiction


def base_url(jurisdiction: Jurisdiction) -> str:
    return (jurisdiction.endpoints.get("aca") or jurisdiction.portal_base_url).rstrip("/")


def module_of(jurisdiction: Jurisdiction) -> str:
    return jurisdiction.module or "Building"


def caphome_url(jurisdiction: Jurisdiction) -> str:
    module = module_of(jurisdiction)
    return f"{base_url(jurisdiction)}/Cap/CapHome.aspx?" + urlencode(
        {"module": module, "TabName": module}
    )


def capdetail_url(jurisdiction: Jurisdiction, cap_id: CapId, *, inspections: bool) -> str:
    module = module_of(jurisdiction)
    query = {
        "Module": module,
        "TabName": module,
        "capID1": cap_id.id1,
        "capID2": cap_id.id2,
        "capID3": cap_id.id3,
        "agencyCode": jurisdiction.agency_code or "",
        # "Y" opens the record with its Inspections section; the grid links send it empty.
        "IsToShowInspection": "Y" if inspections else "",
    }
    return f"{base_url(jurisdiction)}/Cap/CapDetail.aspx?" + urlencode(query)


def processing_url(jurisdiction: Jurisdiction) -> str:
    return f"{base_url(jurisdiction)}/Cap/CapDetail.aspx/GetProcessingData"


def resolve(page_url: str, link: str) -> str:
    """A link or form action as found in a page, made absolute against the page URL."""
    return urljoin(page_url, link)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
