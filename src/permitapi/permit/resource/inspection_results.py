"""Inspection results -> outcomes, for pass rates.

A portal family that knows its own vocabulary exports `classify_inspection_result(result) ->
"pass" | "fail" | "other"` from `sources/<family>/status.py` (LADBS and EPIC-LA do); it is used for
its jurisdictions. Families without one use the fallback below, matched on lower-cased keywords
in this order (the first rule that hits wins):

1. not performed: cancelled, scheduled, rescheduled, pending, requested, no access, no entry,
   void, withdrawn — nothing was inspected, so it is not a completed inspection;
2. failed: fail, disapproved, not approved, correction, rejected, denied, not ok, not ready
   (the inspector came and did not pass the work, as LADBS's own classifier also rules);
3. passed: pass, approved (also partial and conditional approvals: the inspected scope passed),
   ok, complete, final, cofo/cofc issued, accepted;
4. anything else is unclassified and, like rule 1, left out of the pass rate.

The order matters: "Not Approved" must not match "approved", "Insp Cancelled" is not a pass.
Known strings come from the saved portal pages (tests/fixtures).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from enum import StrEnum
from functools import lru_cache

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
            r"cancel|\bscheduled\b|reschedul|pending|requested|no access|no entry"
            r"|\bvoid|withdraw"
        ),
    ),
    (
        InspectionOutcome.FAILED,
        re.compile(r"fail|disapprov|not approved|correction|reject|denied|not ok|not ready"),
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


_FAMILY_CLASSES = {
    "pass": InspectionOutcome.PASSED,
    "fail": InspectionOutcome.FAILED,
    "other": InspectionOutcome.UNCLASSIFIED,
}


@lru_cache(maxsize=16)
def classifier_for(family: str | None) -> Callable[[str | None], InspectionOutcome]:
    """The family's own classifier when it exports one, else `classify`."""
    if not family or not family.isidentifier():
        return classify
    try:
        module = importlib.import_module(f"permitapi.sources.{family}.status")
    except ModuleNotFoundError:
        return classify
    family_classify = getattr(module, "classify_inspection_result", None)
    if family_classify is None:
        return classify

    def adapted(result: str | None) -> InspectionOutcome:
        return _FAMILY_CLASSES.get(family_classify(result), InspectionOutcome.UNCLASSIFIED)

    return adapted


def pass_rate(results: list[str | None], family: str | None = None) -> float | None:
    """Passed / (passed + failed), rounded to 3 places; None when nothing was completed."""
    outcome_of = classifier_for(family)
    outcomes = [outcome_of(r) for r in results]
    passed = outcomes.count(InspectionOutcome.PASSED)
    completed = passed + outcomes.count(InspectionOutcome.FAILED)
    return round(passed / completed, 3) if completed else None
