"""The real LADBS captures (tests/fixtures/ladbs, origins in its README)."""

from __future__ import annotations

import json
from typing import Any

from tests.support.samples import family_samples, sample


def text(name: str) -> str:
    # newline="" keeps the pages' \r\r\n line endings exactly as captured
    with sample("ladbs", name).open(encoding="utf-8", newline="") as handle:
        return handle.read()


def rows(name: str) -> Any:
    return json.loads(sample("ladbs", name).read_text(encoding="utf-8"))


def all_names() -> set[str]:
    return {path.name for path in family_samples("ladbs")}


ELECTRICAL = "pcis-permit-detail_16041-10000-23545_electrical-permit-finaled.html"
ADDITION = "pcis-permit-detail_26014-10000-00017_bldg-addition-not-issued-with-clearances.html"
GRADING = "pcis-permit-detail_26030-10000-01235_grading-gpi-preinspection-completed.html"
OTSEGO = "address-results-details_13157-W-Otsego-St_selenium-dom.html"
STEWART = "address-results-details_7841-S-Stewart-Ave_selenium-dom.html"
SEARCH_FORM = "permit-inspection-report_search-form_selenium-dom.html"
INSP_49 = "socrata-9w5z-rg2h_inspections_20010-20000-02739_49-rows-with-duplicates.json"
INSP_82 = "socrata-9w5z-rg2h_inspections_21010-10000-05865_82-rows-corrections-reinspections.json"
INSP_3 = "socrata-9w5z-rg2h_inspections_21016-20000-20141_3-rows.json"
ROW_SUPPLEMENTAL = "socrata-gwh9-jnip_row_18010-20001-05038_permit-finaled-supplemental.json"
ROW_02739 = "socrata-gwh9-jnip_row_20010-20000-02739_cofo-issued.json"
ROW_05865 = "socrata-gwh9-jnip_row_21010-10000-05865_cofo-issued.json"
ROW_20141 = "socrata-gwh9-jnip_row_21016-20000-20141_permit-finaled.json"
ROW_UNISSUED = "socrata-gwh9-jnip_row_21030-20000-00256_unissued-pc-approved.json"
ALL = (
    ELECTRICAL, ADDITION, GRADING, OTSEGO, STEWART, SEARCH_FORM, INSP_49, INSP_82, INSP_3,
    ROW_SUPPLEMENTAL, ROW_02739, ROW_05865, ROW_20141, ROW_UNISSUED,
)  # fmt: skip
