"""Which path answers a status or batch call: sandbox keys (and the keyless demo, whose
principal is a sandbox one) from the curated dataset, live keys by a metered lookup.

Shared by GET status / POST batch-status and the tool server's get_permit_status and
batch_permit_status, so the rule has one home.
"""

from __future__ import annotations

from typing import Any

from permitapi.account import auth
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.demo.access import DEMO_PRINCIPAL
from permitapi.permit.lookup import batch
from permitapi.permit.lookup import service as lookup
from permitapi.permit.lookup.fast import path as hot_path
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.sandbox import service as sandbox
from permitapi.permit.lookup.service import ItemOutcome, StatusQuery


async def _still_active(ctx: AppContext, principal: Principal) -> None:
    # The demo's principal is no stored key; a sandbox key's principal may come from a cache.
    if principal.api_key_id == DEMO_PRINCIPAL.api_key_id:
        return
    if ctx.settings.fast_path:
        await hot_path.ensure_key_active(ctx, principal)
        return
    async with ctx.sessionmaker() as session:
        await auth.ensure_active(session, principal)


async def permit_status(
    ctx: AppContext, principal: Principal, query: StatusQuery, meter: MeterTracker
) -> ItemOutcome:
    """One status answer: a record, an operation (202) or the error outcome. Raises ApiError for
    refusals made before any credit is reserved (validation, entitlement, limits)."""
    if principal.is_sandbox:
        await _still_active(ctx, principal)
        return await sandbox.sandbox_status(ctx, principal, query)
    return await lookup.lookup_status(ctx, principal, query, meter)


async def batch_status(
    ctx: AppContext, principal: Principal, numbers: list[str], meter: MeterTracker
) -> dict[str, Any]:
    """The batch body (results, errors, operations). Raises only for a bad batch size or an
    exhausted month."""
    if principal.is_sandbox:
        await _still_active(ctx, principal)
        return sandbox.sandbox_batch(ctx, principal, numbers)
    return await batch.batch_status(ctx, principal, numbers, meter)
