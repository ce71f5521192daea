"""How each simulated agency's record page looks: which custom-field layout it renders and the
labels it gives the parcel and the record's value. Real tenants differ exactly here (a
Florida county's tabbed record shows "Folio Number" and "Total Project Value" in the
`ASIReview2Columns` layout; California cities print "APN" or "Parcel Number" and "Job
Value($)" in `MoreDetail_ItemCol1/2` pairs), so every test of the adapter meets both."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

Layout = Literal["more_details", "asi_review"]

PARCEL_LABELS = ("Parcel Number", "APN", "Parcel No.", "PIN")
VALUE_LABELS = ("Job Value($)", "Valuation", "Estimated Cost", "Construction Valuation")


@dataclass(frozen=True, slots=True)
class AgencyLook:
    layout: Layout
    parcel_label: str
    value_label: str


# Agencies whose look the issue and public scrapers describe; the rest are spread by hash.
KNOWN: dict[str, AgencyLook] = {
    "aca:kingco": AgencyLook("more_details", "Parcel Number", "Job Value($)"),
    "aca:hcfl": AgencyLook("asi_review", "Folio Number", "Total Project Value"),
    "aca:pasco": AgencyLook("asi_review", "Folio Number", "Total Project Value"),
    "aca:tampa": AgencyLook("asi_review", "Folio Number", "Total Project Value"),
    "aca:anaheim": AgencyLook("more_details", "APN", "Job Value($)"),
    "aca:buncombe": AgencyLook("asi_review", "PIN", "Estimated Cost"),
}


def look_of(slug: str, state: str) -> AgencyLook:
    if slug in KNOWN:
        return KNOWN[slug]
    digest = hashlib.sha256(slug.encode()).digest()
    layout: Layout = "asi_review" if digest[0] % 2 else "more_details"
    if state == "FL":
        return AgencyLook(layout, "Folio Number", "Total Project Value")
    return AgencyLook(
        layout,
        PARCEL_LABELS[digest[1] % len(PARCEL_LABELS)],
        VALUE_LABELS[digest[2] % len(VALUE_LABELS)],
    )
