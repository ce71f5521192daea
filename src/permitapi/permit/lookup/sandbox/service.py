"""Sandbox keys (and keyless demo calls): status and batch answered from the curated,
deterministic demo dataset, `dataset.json` beside this module (listed in the README).

No portal fetch, no metering, no database reads. Any other number behaves as it would live,
without a fetch: a number no jurisdiction uses is 404 `jurisdiction_not_supported`, an ambiguous
one (e.g. `BLD24-00123`) is 300 `multiple_jurisdictions`, and a well-formed unknown one (e.g.
`21030-20000-99999`) is 404 `permit_not_found` worded as what it is: not in the demo (keyless)
or sandbox dataset, which says nothing about the portal; it names `dataset`, numbers to try
(`try_numbers`) and how to get a live answer. Demo answers are `source: cached`, synced at the
start of the current hour.
"""

from __future__ import annotations

from typing import Any

from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.demo.access import DEMO_PRINCIPAL
from permitapi.errors import ApiError, BadRequest, NotFound
from permitapi.permit.identity.service import (
    check_number,
    detected,
    explicit_jurisdiction,
    unmatched,
)
from permitapi.permit.lookup import status_record
from permitapi.permit.lookup.batch import check_batch_size, shape
from permitapi.permit.lookup.sandbox.dataset import DemoPermit, demo_permits
from permitapi.permit.lookup.service import (
    ItemOutcome,
    StatusQuery,
    Target,
    check_force_refresh,
)
from permitapi.permit.repository import CachedPermit
from permitapi.sources.detect import normalize_number, permit_id

DEMO_PERMITS = demo_permits()
_BY_NUMBER = {d.permit_number: d for d in DEMO_PERMITS}
TRY_NUMBERS = 3


def not_in_dataset(principal: Principal, target: Target) -> NotFound:
    """404 permit_not_found for a number outside the curated dataset: the portal was not read,
    so the answer must not read as "this permit does not exist"."""
    keyless = principal.api_key_id == DEMO_PRINCIPAL.api_key_id
    dataset = "demo" if keyless else "sandbox"
    same = [d.permit_number for d in DEMO_PERMITS if d.jurisdiction == target.jurisdiction.slug]
    others = [d.permit_number for d in DEMO_PERMITS if d.permit_number not in same]
    numbers = (same + others)[:TRY_NUMBERS]
    how = (
        "send an API key (a live key, sk_live_..., reads the portal)"
        if keyless
        else "use a live key (sk_live_...) of the same account to read the portal"
    )
    return NotFound(
        f"Permit {target.number} is not in the {dataset} dataset: "
        f"{'keyless calls' if keyless else 'sandbox keys'} answer from curated demo permits "
        f"only and did not read {target.jurisdiction.display_name}'s portal, so the permit may "
        f"well exist. Try {', '.join(numbers)}, or {how}.",
        code="permit_not_found",
        extra={
            "jurisdiction": target.jurisdiction.slug,
            "dataset": dataset,
            "try_numbers": numbers,
        },
    )


def _row(ctx: AppContext, demo: DemoPermit) -> CachedPermit:
    synced = ctx.clock.now().replace(minute=0, second=0, microsecond=0)
    return CachedPermit(
        permit_id=str(permit_id(demo.jurisdiction, demo.permit_number)),
        jurisdiction=demo.jurisdiction,
        display_number=demo.permit_number,
        raw_status=demo.raw_status,
        normalized_status=demo.status.value,
        permit_type=demo.permit_type,
        address=demo.address,
        work_description=demo.work_description,
        fetched_at=synced,
        last_attempted_at=synced,
        last_failure_reason=None,
        has_snapshot=True,
    )


def _item(ctx: AppContext, principal: Principal, query: StatusQuery) -> ItemOutcome:
    generic = "".join(query.permit_number.split()).upper()
    if query.jurisdiction is not None:
        jurisdiction = explicit_jurisdiction(ctx.directory, query.jurisdiction)
        demo = _BY_NUMBER.get(normalize_number(jurisdiction, query.permit_number))
        if demo is None or demo.jurisdiction != jurisdiction.slug:
            target = Target(jurisdiction, normalize_number(jurisdiction, query.permit_number))
            return ItemOutcome("error", error=not_in_dataset(principal, target))
    else:
        demo = _BY_NUMBER.get(generic)
    if demo is None:
        # Detection only: the sandbox reads no database, so "looked up before" never applies.
        match, candidates = detected(ctx.directory, query.permit_number, query.near)
        error: ApiError
        if match is not None:
            error = not_in_dataset(principal, Target(match.jurisdiction, match.number))
        else:
            error = unmatched(query.permit_number, candidates, example_tail="status")
        return ItemOutcome("error", error=error)
    body = status_record.status_record(
        _row(ctx, demo),
        ctx.directory,
        source="cached",
        now=ctx.clock.now(),
        refresh_available=principal.plan.force_refresh,
    )
    return ItemOutcome("record", body)


async def sandbox_status(ctx: AppContext, principal: Principal, query: StatusQuery) -> ItemOutcome:
    check_number(query.permit_number)
    if query.force_refresh:
        await check_force_refresh(ctx, principal)  # same entitlement as live; no fetch
    return _item(ctx, principal, query)


def sandbox_batch(ctx: AppContext, principal: Principal, numbers: list[str]) -> dict[str, Any]:
    check_batch_size(numbers)
    items: list[ItemOutcome] = []
    for raw in numbers:
        try:
            items.append(_item(ctx, principal, StatusQuery(check_number(raw, location="body"))))
        except BadRequest as exc:
            items.append(ItemOutcome("error", error=exc, consumed=False))
    return shape(numbers, items)
