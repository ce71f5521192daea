"""Saved-search rules: entitlements, plan caps, ownership, criteria changes, the views.

- Every endpoint needs a live key (sandbox: 403 sandbox_not_supported).
- Create and update need a paid plan with the Permit Discovery add-on (403
  saved_search_not_available with `upgrade_hint`); list, get and delete do not, so a key that
  lost the add-on still sees and removes its searches.
- Active (not paused) searches per key are capped by the plan (400 saved_search_limit_reached
  with plan_limit and upgrade_hint), counted under the key's lock so that concurrent creations
  cannot both take the last slot. Resuming a paused search takes a slot too.
- Another key's search is 404 saved_search_not_found, exactly like one that does not exist.
- Nothing here costs credits.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.entitlements import PlanCap, ensure_below_cap, require_live_key
from permitapi.account.plans import PLANS
from permitapi.account.service import Principal
from permitapi.discovery.filters import SearchQuery
from permitapi.errors import ApiError, Forbidden, NotFound, invalid_parameter
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.saved_search import repository
from permitapi.saved_search.criteria import parse_criteria, same_search
from permitapi.saved_search.models import SavedSearch
from permitapi.saved_search.schemas import NAME_MAX

WHAT: Final = "Saved searches"
ACTIVE: Final = "active"
PAUSED: Final = "paused"


def entitled_plans() -> list[str]:
    """Plans whose keys may use saved searches and permit_created (with the add-on)."""
    return [plan.name.value for plan in PLANS.values() if plan.paid]


def is_entitled(principal: Principal) -> bool:
    return not principal.is_sandbox and principal.plan.paid and principal.discovery_addon


def saved_search_not_found(saved_search_id: str) -> NotFound:
    return NotFound(
        f"No saved search {saved_search_id} under this API key.", code="saved_search_not_found"
    )


def require_entitlement(principal: Principal) -> None:
    require_live_key(principal, WHAT)
    if not principal.plan.paid:
        raise Forbidden(
            "Saved searches need a paid plan with the Permit Discovery add-on.",
            code="saved_search_not_available",
            extra={
                "upgrade_hint": "Upgrade to the Developer, Pro or Enterprise plan and enable "
                "the Permit Discovery add-on to save searches."
            },
        )
    if not principal.discovery_addon:
        raise Forbidden(
            "Saved searches need the Permit Discovery add-on.",
            code="saved_search_not_available",
            extra={
                "upgrade_hint": "Enable the Permit Discovery add-on (free during the beta) "
                "to save searches; existing saved searches can still be listed, read and "
                "deleted."
            },
        )


def valid_name(raw: str) -> str:
    name = " ".join(raw.split())
    if not name or len(raw) > NAME_MAX or not name.isprintable():
        raise invalid_parameter(
            "name",
            f"must be 1-{NAME_MAX} printable characters, not only spaces",
            code="invalid_name",
            location="body",
        )
    return name


def checked_definition(
    principal: Principal, name: str | None, criteria: dict[str, Any] | None
) -> tuple[str | None, SearchQuery | None]:
    """Entitlement, name and criteria of a creation or PATCH, checked before any transaction."""
    require_entitlement(principal)
    return (
        valid_name(name) if name is not None else None,
        parse_criteria(criteria) if criteria is not None else None,
    )


SAVED_SEARCH_CAP: Final = PlanCap(
    code="saved_search_limit_reached",
    allows="active saved search(es) per key",
    upgrade_hint="Upgrade the plan for more active saved searches, or pause or delete one.",
    enterprise_hint="Pause or delete a saved search to add another.",
)


async def _ensure_room(session: AsyncSession, principal: Principal) -> None:
    await ensure_below_cap(
        session,
        principal,
        principal.plan.active_saved_searches,
        SAVED_SEARCH_CAP,
        lambda: repository.count_active(session, principal.api_key_id),
    )


def _state(search: SavedSearch, principal: Principal) -> str:
    if search.status == PAUSED:
        return "paused"
    if not is_entitled(principal):
        return "suspended"
    return "awaiting_baseline" if search.baseline_taken_at is None else "monitoring"


def view(search: SavedSearch, baseline_size: int, principal: Principal) -> dict[str, Any]:
    def moment(value: datetime | None) -> str | None:
        return isoformat_z(value) if value is not None else None

    error = None
    if search.last_error_code is not None:
        error = {"code": search.last_error_code, "message": search.last_error_message or ""}
    return {
        "saved_search_id": search.saved_search_id,
        "name": search.name,
        "criteria": search.criteria,
        "status": search.status,
        "created_at": isoformat_z(search.created_at),
        "updated_at": isoformat_z(search.updated_at),
        "evaluation": {
            "state": _state(search, principal),
            "baseline_taken_at": moment(search.baseline_taken_at),
            "baseline_size": baseline_size,
            "last_evaluated_at": moment(search.last_evaluated_at),
            "last_success_at": moment(search.last_success_at),
            "last_match_at": moment(search.last_match_at),
            "last_error": error,
        },
    }


async def _view_of(
    session: AsyncSession, search: SavedSearch, principal: Principal
) -> dict[str, Any]:
    counts = await repository.identity_counts(session, [search.saved_search_id])
    return view(search, counts.get(search.saved_search_id, 0), principal)


async def create(
    session: AsyncSession,
    principal: Principal,
    *,
    name: str,
    criteria: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """Arguments already checked by `checked_definition`. The search is evaluated by the next
    daily pass; its first successful evaluation is the silent baseline."""
    require_entitlement(principal)
    search = SavedSearch(
        saved_search_id=new_uuid(),
        api_key_id=principal.api_key_id,
        name=name,
        criteria=criteria,
        status=ACTIVE,
        generation=1,
        created_at=now,
        updated_at=now,
    )
    await _ensure_room(session, principal)
    await repository.insert_search(session, search)
    return view(search, 0, principal)


async def list_searches(session: AsyncSession, principal: Principal) -> dict[str, Any]:
    require_live_key(principal, WHAT)
    found = await repository.searches_of(session, principal.api_key_id)
    counts = await repository.identity_counts(session, [s.saved_search_id for s in found])
    active = sum(1 for search in found if search.status == ACTIVE)
    cap = principal.plan.active_saved_searches
    return {
        "saved_searches": [
            view(search, counts.get(search.saved_search_id, 0), principal) for search in found
        ],
        "total": len(found),
        "active": active,
        "plan_limit": cap,
        "remaining": max(0, cap - active) if is_entitled(principal) else 0,
    }


async def owned(
    session: AsyncSession, principal: Principal, saved_search_id: str, *, for_update: bool = False
) -> SavedSearch:
    require_live_key(principal, WHAT)
    search = await repository.owned_search(
        session, principal.api_key_id, saved_search_id, for_update=for_update
    )
    if search is None:
        raise saved_search_not_found(saved_search_id)
    return search


async def get(session: AsyncSession, principal: Principal, saved_search_id: str) -> dict[str, Any]:
    return await _view_of(session, await owned(session, principal, saved_search_id), principal)


def _stored_query(search: SavedSearch) -> SearchQuery | None:
    try:
        return parse_criteria(search.criteria)
    except ApiError:  # stored under older rules; any new criteria are a change
        return None


async def update(
    session: AsyncSession,
    principal: Principal,
    saved_search_id: str,
    *,
    name: str | None,
    criteria: dict[str, Any] | None,
    query: SearchQuery | None,
    status: str | None,
    now: datetime,
) -> dict[str, Any]:
    """Apply a PATCH already checked by `checked_definition`. Criteria that select other
    permits clear the identities (the next successful evaluation is a fresh baseline);
    pausing keeps them; resuming takes a slot under the plan's cap."""
    require_entitlement(principal)
    search = await owned(session, principal, saved_search_id, for_update=True)
    values: dict[str, Any] = {}
    if name is not None and name != search.name:
        values["name"] = name
    if criteria is not None and query is not None:
        values["criteria"] = criteria
        previous = _stored_query(search)
        if previous is None or not same_search(previous, query):
            values.update(
                generation=search.generation + 1,
                baseline_taken_at=None,
                last_error_code=None,
                last_error_message=None,
            )
            await repository.forget_identities(session, saved_search_id)
    if status == ACTIVE and search.status == PAUSED:
        await _ensure_room(session, principal)
        values["status"] = ACTIVE
    elif status == PAUSED and search.status == ACTIVE:
        values["status"] = PAUSED
    if values:
        values["updated_at"] = now
        await repository.update_search(session, saved_search_id, values)
        for key, value in values.items():
            setattr(search, key, value)
    return await _view_of(session, search, principal)


async def delete(
    session: AsyncSession, principal: Principal, saved_search_id: str
) -> dict[str, Any]:
    """Removes the definition and its identities; the events it emitted stay in the feed."""
    await owned(session, principal, saved_search_id, for_update=True)
    await repository.delete_search(session, saved_search_id)
    return {"status": "deleted", "saved_search_id": saved_search_id}
