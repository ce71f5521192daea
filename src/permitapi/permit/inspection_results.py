"""One classifier of published inspection results, for pass rates.

No family module classifies results yet, so the rule lives here, in one place. Results are
matched on lower-cased keywords in this order (the first rule that hits wins):

1. not performed: cancelled, scheduled, rescheduled, pending, requested, not ready, no access,
   no entry, void, withdrawn — nothing was inspected, so it is not a completed inspection;
2. failed: fail, disapproved, not approved, correction, rejected, denied, not ok;
3. passed: pass, approved (also partial and conditional approvals: the inspected scope passed),
   ok, complete, final, cofo/cofc issued, accepted;
4. anything else is unclassified and, like rule 1, left out of the pass rate.

The order matters: "Not Ready for Inspection" must not count as a pass and "Not Approved" must
not match "approved". Known strings come from the saved portal pages (portal-samples).
"""

from __future__ import annotations

import re
from enum import StrEnum

from permitapi.sources.status import status_key


class InspectionOutcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_PERFORMED = "not_performed"
    UNCLASSIFIED = "unclassified"


_RULES: tuple[tuple[InspectionOutcome, re.Pattern[str]], ...] = (
    (
        InspectionOutcome.NOT_PERFORMED,
        re.compile(
            r"cancel|\bscheduled\b|reschedul|pending|requested|not ready|no access|no entry"
            r"|\bvoid|withdraw"
        ),
    ),
    (
        InspectionOutcome.FAILED,
        re.compile(r"fail|disapprov|not approved|correction|reject|denied|not ok"),
    ),
    (
        InspectionOutcome.PASSED,
        re.compile(r"pass|approv|\bok\b|complete|final|cof[oc] issued|accepted"),
    ),
)


def classify(result: str | None) -> InspectionOutcome:
    if result is None or not result.strip():
        return InspectionOutcome.NOT_PERFORMED
    key = status_key(result)
    for outcome, pattern in _RULES:
        if pattern.search(key):
            return outcome
    return InspectionOutcome.UNCLASSIFIED


def pass_rate(results: list[str | None]) -> float | None:
    """Passed / (passed + failed), rounded to 3 places; None when nothing was completed."""
    outcomes = [classify(r) for r in results]
    passed = outcomes.count(InspectionOutcome.PASSED)
    completed = passed + outcomes.count(InspectionOutcome.FAILED)
    return round(passed / completed, 3) if completed else None
