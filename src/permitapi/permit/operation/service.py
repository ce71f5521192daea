"""Operation rules: accepting a refresh as a durable operation, owner-scoped polling, and
finishing it (settling its reserved credits and emitting `operation_completed` once).

States: pending -> running -> succeeded | failed. A succeeded operation's `result` is the body
the synchronous lookup would have answered: the permit status record, or for a portal-confirmed
missing permit the `permit_not_found` problem (`result.status` 404). Credits reserved at
acceptance are consumed on success and released on failure.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import Meter
from permitapi.errors import NotFound
from permitapi.event import service as events
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.permit.operation import repository
from permitapi.permit.operation.models import Operation
from permitapi.usage import repository as meters

OPERATION_TYPE = "permit_refresh"
API_PREFIX = "/api/v1"


def poll_url(operation_id: str) -> str:
    return f"{API_PREFIX}/operations/{operation_id}"


def _moment(value: datetime | None) -> str | None:
    return None if value is None else isoformat_z(value)


def body(operation: Operation) -> dict[str, Any]:
    return {
        "operation_id": operation.operation_id,
        "operation_type": operation.operation_type,
        "status": operation.status,
        "poll_url": poll_url(operation.operation_id),
        "created_at": isoformat_z(operation.created_at),
        "started_at": _moment(operation.started_at),
        "completed_at": _moment(operation.completed_at),
        "result": operation.result,
        "error": operation.error,
    }


async def create(
    session: AsyncSession,
    *,
    api_key_id: str,
    jurisdiction: str,
    permit_number: str,
    force_refresh: bool,
    reserved_period: str | None,
    reserved_units: int,
    now: datetime,
) -> dict[str, Any]:
    """Accept a permit refresh as a pending operation holding `reserved_units` lookup credits
    (already reserved by the caller in this transaction)."""
    operation = Operation(
        operation_id=new_uuid(),
        api_key_id=api_key_id,
        operation_type=OPERATION_TYPE,
        status="pending",
        permit_number=permit_number,
        jurisdiction=jurisdiction,
        force_refresh=force_refresh,
        reserved_meter=Meter.LOOKUP.value if reserved_units else None,
        reserved_period=reserved_period,
        reserved_units=reserved_units,
        result=None,
        error=None,
        attempts=0,
        next_run_at=now,
        created_at=now,
    )
    await repository.insert(session, operation)
    return body(operation)


async def get_for_owner(
    session: AsyncSession, api_key_id: str, operation_id: str
) -> dict[str, Any]:
    """The operation, if this key created it; any other key gets 404 (existence not revealed)."""
    operation = await repository.get_owned(session, operation_id, api_key_id)
    if operation is None:
        raise NotFound(f"No operation {operation_id} for this key.", code="operation_not_found")
    return body(operation)


async def finish(
    session: AsyncSession,
    operation_id: str,
    owner: str,
    *,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
    now: datetime,
) -> bool:
    """Complete a leased operation: succeeded with `result`, or failed with `error`.

    In the caller's transaction: the state change, the credit settlement (release on failure)
    and the `operation_completed` outbox event. Returns False, doing nothing, when this owner
    lost the lease (another worker finishes the operation instead).
    """
    status = "failed" if error is not None else "succeeded"
    if not await repository.complete(
        session, operation_id, owner, status=status, result=result, error=error, completed_at=now
    ):
        return False
    operation = await repository.get(session, operation_id)
    assert operation is not None
    if status == "failed" and operation.reserved_units and operation.reserved_period:
        await meters.give_back(
            session,
            operation.api_key_id,
            operation.reserved_meter or Meter.LOOKUP.value,
            operation.reserved_period,
            operation.reserved_units,
        )
    await events.emit(
        session,
        events.OPERATION_COMPLETED,
        api_key_id=operation.api_key_id,
        recipients=[operation.api_key_id],
        permit_number=operation.permit_number,
        jurisdiction=operation.jurisdiction,
        occurred_at=now,
        data={
            "operation_id": operation.operation_id,
            "operation_type": operation.operation_type,
            "status": status,
            "poll_url": poll_url(operation.operation_id),
            "result": result,
            "error": error,
            "completed_at": isoformat_z(now),
        },
    )
    return True
