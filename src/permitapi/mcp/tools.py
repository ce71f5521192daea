"""The twelve tools: each a thin wrapper over the service call its REST twin makes.

| tool                   | REST twin                    | service call                  |
|------------------------|------------------------------|-------------------------------|
| get_permit_status      | GET /permits/{n}/status      | permit.dispatch.permit_status |
| batch_permit_status    | POST /permits/batch-status   | permit.dispatch.batch_status  |
| list_jurisdictions     | GET /jurisdictions           | jurisdiction.service          |
| search_permits         | GET /permits/search          | discovery.service             |
| resolve_permit         | POST /permit-resolutions     | permit.resolution             |
| get_canonical_permit   | GET /permits/{permit_id}     | permit.details                |
| get_permit_inspections | GET /permits/{n}/inspections | permit.details                |
| get_permit_conditions  | GET /permits/{n}/conditions  | permit.details                |
| get_permit_history     | GET /permits/{n}/history     | permit.details                |
| watch_permit           | POST /permits/{n}/watch      | watch.service.enroll          |
| unwatch_permit         | DELETE /permits/{n}/watch    | watch.service.unwatch         |
| list_watches           | GET /permits/watches         | watch.service.list_watches    |

A handler returns the REST answer's body (`structuredContent`) or raises the REST twin's
ApiError (an `isError` result, see `results`). Entitlements, limits, metering and settlement are
the services'; nothing here decides them.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel
from starlette.requests import Request

from permitapi.account.plans import BATCH_MAX_PERMITS, FREE_DISCOVERY_ALLOWANCE, PLANS, Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.discovery import service as discovery
from permitapi.discovery.schemas import SearchResponse
from permitapi.jurisdiction import service as jurisdictions
from permitapi.jurisdiction.schemas import JurisdictionList
from permitapi.mcp import render
from permitapi.mcp.auth import Access, Caller
from permitapi.mcp.schemas import (
    BatchInput,
    NoInput,
    OperationAccepted,
    PermitIdInput,
    PermitRef,
    SearchInput,
    StatusInput,
    ToolInput,
    WatchAnswer,
    input_schema,
    output_schema,
)
from permitapi.permit import details, dispatch, lookup
from permitapi.permit.lookup import StatusQuery
from permitapi.permit.metering import MeterTracker
from permitapi.permit.resolution import resolve_permit
from permitapi.permit.resource_schemas import (
    ConditionsResponse,
    HistoryResponse,
    InspectionsResponse,
    PermitResource,
    Resolution,
)
from permitapi.permit.schemas import BatchResponse, PermitStatus
from permitapi.sources.registry import Directory
from permitapi.watch import service as watches
from permitapi.watch.schemas import WatchEnrolled, WatchList, WatchRemoved
from permitapi.web.deps import record_meter

# REST answers a 202 with `Retry-After: 2` (permit/endpoints.py): the same pause here.
POLL_AFTER_SECONDS = 2

KEYLESS_NOTE = (
    "Without an API key it answers from the demo dataset (the sandbox's curated permits; a "
    "daily cap per client address)."
)
WATCH_CAPS = ", ".join(f"{name.value} {plan.active_watches}" for name, plan in PLANS.items())


@dataclass
class ToolCall:
    """What a handler runs with: the app context, the HTTP request of the `tools/call`, the
    caller and the tracker of the call's lookup-credit reservation."""

    ctx: AppContext
    request: Request
    caller: Caller
    meter: MeterTracker = field(default_factory=MeterTracker)

    @property
    def principal(self) -> Principal:
        assert self.caller.principal is not None
        return self.caller.principal


Handler = Callable[[ToolCall, Any], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    outputs: tuple[type[BaseModel], ...]
    access: Access
    annotations: ToolAnnotations
    handler: Handler
    render: render.Renderer
    meter: Meter = Meter.LOOKUP
    jurisdiction_enum: bool = True

    def input_schema(self, directory: Directory) -> dict[str, Any]:
        slugs = [j.slug for j in directory] if self.jurisdiction_enum else None
        return input_schema(self.input_model, jurisdictions=slugs)

    def output_schema(self) -> dict[str, Any]:
        return output_schema(*self.outputs)


def _json(model: BaseModel, *, exclude_none: bool = False) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", exclude_none=exclude_none)
    return dumped


# -- handlers ----------------------------------------------------------------------------------


def _poll_hint(call: ToolCall, poll_url: str) -> str:
    base = str(call.request.base_url).rstrip("/")
    return (
        "The portal is read in the background. Poll GET "
        f"{base}{poll_url} with the same API key (free, not burst-limited) until status is "
        "succeeded or failed; a succeeded operation's result is the status record. Once it "
        "has succeeded, get_permit_status answers from the cache."
    )


async def _permit_status(call: ToolCall, args: StatusInput) -> dict[str, Any]:
    query = StatusQuery(
        permit_number=args.permit_number,
        jurisdiction=args.jurisdiction,
        force_refresh=args.force_refresh,
        near=lookup.parse_near(args.near),
        respond_async=args.respond_async,
    )
    item = await dispatch.permit_status(call.ctx, call.principal, query, call.meter)
    if item.kind == "record":
        return item.body
    if item.kind == "operation":
        return {
            **item.body,
            "retry_after_seconds": POLL_AFTER_SECONDS,
            "poll_hint": _poll_hint(call, item.body["poll_url"]),
        }
    assert item.error is not None
    raise item.error


async def _batch(call: ToolCall, args: BatchInput) -> dict[str, Any]:
    return await dispatch.batch_status(call.ctx, call.principal, args.permit_numbers, call.meter)


async def _jurisdictions(call: ToolCall, args: NoInput) -> dict[str, Any]:
    async with call.ctx.sessionmaker() as session:
        listing = await jurisdictions.directory_listing(session, call.ctx.directory)
    return _json(JurisdictionList.model_validate(listing))


async def _search(call: ToolCall, args: SearchInput) -> dict[str, Any]:
    answer = await discovery.search_permits(
        call.ctx, call.ctx.gateway, call.principal, args.query_params()
    )
    record_meter(call.request, answer.meter)
    return _json(SearchResponse.model_validate(answer.body))


async def _resolve(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    async with call.ctx.sessionmaker() as session:
        resolution = await resolve_permit(
            session,
            call.ctx.directory,
            args.permit_number,
            args.jurisdiction,
            sandbox=call.principal.is_sandbox,
        )
    return _json(resolution)


async def _canonical(call: ToolCall, args: PermitIdInput) -> dict[str, Any]:
    permit_id = str(uuid.UUID(args.permit_id))
    return _json(await details.canonical_permit(call.ctx, call.principal, permit_id, call.meter))


async def _inspections(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await details.inspections(
        call.ctx, call.principal, args.permit_number, args.jurisdiction, call.meter
    )
    return _json(found)


async def _conditions(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await details.conditions(
        call.ctx, call.principal, args.permit_number, args.jurisdiction, call.meter
    )
    return _json(found)


async def _history(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await details.history(
        call.ctx, call.principal, args.permit_number, args.jurisdiction, call.meter
    )
    return _json(found)


async def _watch(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    enrolled = await watches.enroll(call.ctx, call.principal, args.permit_number, args.jurisdiction)
    body = _json(WatchEnrolled.model_validate(enrolled.body), exclude_none=True)
    return {**body, "newly_watched": enrolled.created}


async def _unwatch(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    removed = await watches.unwatch(call.ctx, call.principal, args.permit_number, args.jurisdiction)
    return _json(WatchRemoved.model_validate(removed))


async def _list_watches(call: ToolCall, args: NoInput) -> dict[str, Any]:
    return _json(WatchList.model_validate(await watches.list_watches(call.ctx, call.principal)))


# -- the catalogue -----------------------------------------------------------------------------

_READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_READ_PORTAL = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

TOOLS: tuple[Tool, ...] = (
    Tool(
        name="get_permit_status",
        title="Permit status",
        description=(
            "Current status of one building permit by its number: status text and phase, type, "
            "address, work description and data freshness. The jurisdiction is detected from "
            "the number's format; pass `jurisdiction` for shared formats (an ambiguous number "
            "answers multiple_jurisdictions with ranked candidates). Use it first for any "
            "permit question; the detail tools need it to have run once. Answers come from a "
            "4-hour cache or a live portal read; a slow portal (Accela, aca:*) on a cache miss "
            "answers an operation to poll instead. Cost: 1 lookup credit (kept for 'not "
            "found' answers, given back when the portal is down); force_refresh: 10 credits, "
            "paid plans. " + KEYLESS_NOTE
        ),
        input_model=StatusInput,
        outputs=(PermitStatus, OperationAccepted),
        access=Access.THROTTLED,
        annotations=_READ_PORTAL,
        handler=_permit_status,
        render=render.permit_status,
    ),
    Tool(
        name="batch_permit_status",
        title="Status of several permits",
        description=(
            f"Status of up to {BATCH_MAX_PERMITS} permits in one call. Single misses do not "
            "fail the batch: each number lands in `results`, `errors` (with the error code, "
            "whether it is retryable and a jurisdiction hint) or `operations` (slow portals, "
            "poll later). Numbers are auto-detected; shared formats need a prior "
            "get_permit_status with the jurisdiction. Cost: 1 lookup credit per submitted "
            "number, given back for invalid numbers and portal failures; the whole batch is "
            "refused when the month cannot cover it. " + KEYLESS_NOTE
        ),
        input_model=BatchInput,
        outputs=(BatchResponse,),
        access=Access.THROTTLED,
        annotations=_READ_PORTAL,
        handler=_batch,
        render=render.batch,
    ),
    Tool(
        name="list_jurisdictions",
        title="Supported jurisdictions",
        description=(
            "Every supported city and county: slug (the `jurisdiction` value other tools "
            "take), display name, platform, state and how many active permits the service "
            "has observed. Use it to find a slug. Costs no credit; no API key needed."
        ),
        input_model=NoInput,
        outputs=(JurisdictionList,),
        access=Access.PUBLIC,
        annotations=_READ,
        handler=_jurisdictions,
        render=render.jurisdictions,
    ),
    Tool(
        name="search_permits",
        title="Discover permits",
        description=(
            "Find permits without a number, by live query of the City of Los Angeles (ladbs) "
            "and unincorporated Los Angeles County (epicla), merged newest issue date first. "
            "Filters: parcel, zip, lat/lon/radius_mi, permit_type, issue dates, valuation, "
            "status; a scope alone (city, county or jurisdiction) is a filter too. Hits are "
            "thin (number, jurisdiction, address, type, status, valuation, dates): use "
            "get_permit_status for the full record. Page with `cursor`. Cost: 1 discovery "
            "search per call (page) on the discovery meter "
            f"({FREE_DISCOVERY_ALLOWANCE} a month without the Permit Discovery add-on); "
            "unverifiable empty results (source_inconclusive, "
            "source_lagging) cost nothing and say when to retry. Needs a live API key."
        ),
        input_model=SearchInput,
        outputs=(SearchResponse,),
        access=Access.THROTTLED,
        annotations=_READ_PORTAL,
        handler=_search,
        render=render.search,
        meter=Meter.DISCOVERY,
        jurisdiction_enum=False,
    ),
    Tool(
        name="resolve_permit",
        title="Canonical permit id",
        description=(
            "Resolve a permit number (plus jurisdiction for shared formats) to its stable "
            "canonical permit_id (a UUID that does not depend on how the number is "
            "formatted), and say whether a stored representation exists for "
            "get_canonical_permit. No portal read; costs no credit. " + KEYLESS_NOTE
        ),
        input_model=PermitRef,
        outputs=(Resolution,),
        access=Access.THROTTLED,
        annotations=_READ,
        handler=_resolve,
        render=render.resolution,
    ),
    Tool(
        name="get_canonical_permit",
        title="Canonical permit resource",
        description=(
            "The canonical permit resource by permit_id: status, type, address, work, "
            "valuation and dates, each value with its provenance (source system, when "
            "observed, availability). Reads the latest stored representation (run "
            "get_permit_status once first; never reads the portal). Cost: 1 lookup credit, "
            "given back when nothing is stored. Needs a live API key."
        ),
        input_model=PermitIdInput,
        outputs=(PermitResource,),
        access=Access.THROTTLED,
        annotations=_READ,
        handler=_canonical,
        render=render.canonical,
    ),
    Tool(
        name="get_permit_inspections",
        title="Permit inspections",
        description=(
            "Completed inspections (type, date, result, inspector), scheduled ones and the "
            "pass rate, from the latest stored representation (run get_permit_status once "
            "first; never reads the portal). Cost: 1 lookup credit (kept on ambiguous "
            "answers, given back when nothing is stored). Needs a live API key."
        ),
        input_model=PermitRef,
        outputs=(InspectionsResponse,),
        access=Access.THROTTLED,
        annotations=_READ,
        handler=_inspections,
        render=render.inspections,
    ),
    Tool(
        name="get_permit_conditions",
        title="Permit conditions",
        description=(
            "Conditions and holds (outstanding and met, by group) from the latest stored "
            "representation (run get_permit_status once first). Detail varies by "
            "jurisdiction; observed=false means the source published none, not that there "
            "are none. Cost: 1 lookup credit (given back when nothing is stored). Needs a "
            "live API key."
        ),
        input_model=PermitRef,
        outputs=(ConditionsResponse,),
        access=Access.THROTTLED,
        annotations=_READ,
        handler=_conditions,
        render=render.conditions,
    ),
    Tool(
        name="get_permit_history",
        title="Permit history",
        description=(
            "Status timeline (status, when, discipline, corrections, actor and comment when "
            "published) and workflow activities, from the latest stored representation (run "
            "get_permit_status once first). Cost: 1 lookup credit (given back when nothing is "
            "stored). Needs a live API key."
        ),
        input_model=PermitRef,
        outputs=(HistoryResponse,),
        access=Access.THROTTLED,
        annotations=_READ,
        handler=_history,
        render=render.history,
    ),
    Tool(
        name="watch_permit",
        title="Watch a permit",
        description=(
            "Start monitoring a permit: its changes (status_change, permit_approved, "
            "permit_denied, corrections_required, inspection_complete) reach this key's "
            "events feed and webhooks; checked daily. Idempotent: watching a watched permit "
            "changes nothing (newly_watched=false). The number is resolved like "
            "get_permit_status (a permit never looked up is read from its portal once). "
            f"Costs no credit; the plan caps active watches ({WATCH_CAPS}: "
            "watch_limit_reached). Needs a live API key (not sandbox)."
        ),
        input_model=PermitRef,
        outputs=(WatchAnswer,),
        access=Access.UNTHROTTLED,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=True,
        ),
        handler=_watch,
        render=render.watch,
    ),
    Tool(
        name="unwatch_permit",
        title="Stop watching a permit",
        description=(
            "Stop monitoring a permit this key watches (watch_not_found when it does not); "
            "frees a watch slot. Costs no credit. Needs a live API key."
        ),
        input_model=PermitRef,
        outputs=(WatchRemoved,),
        access=Access.UNTHROTTLED,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        handler=_unwatch,
        render=render.unwatch,
    ),
    Tool(
        name="list_watches",
        title="Active watches",
        description=(
            "The permits this key watches (status, since when, last event) with the plan's "
            "cap and the slots remaining. Costs no credit. Needs a live API key."
        ),
        input_model=NoInput,
        outputs=(WatchList,),
        access=Access.UNTHROTTLED,
        annotations=_READ,
        handler=_list_watches,
        render=render.watches,
    ),
)

BY_NAME = {tool.name: tool for tool in TOOLS}
