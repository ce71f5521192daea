"""The thirteen tools: each a thin wrapper over the service call its REST twin makes.

| tool                   | REST twin                    | service call                  |
|------------------------|------------------------------|-------------------------------|
| get_permit_status      | GET /permits/{n}/status      | permit.lookup.sandbox_or_live |
| batch_permit_status    | POST /permits/batch-status   | permit.lookup.sandbox_or_live |
| list_jurisdictions     | GET /jurisdictions           | jurisdiction.service          |
| search_permits         | GET /permits/search          | discovery.service             |
| resolve_permit         | POST /permit-resolutions     | permit.resource.resolution    |
| get_canonical_permit   | GET /permits/{permit_id}     | permit.resource.service       |
| get_permit_inspections | GET /permits/{n}/inspections | permit.resource.service       |
| get_permit_conditions  | GET /permits/{n}/conditions  | permit.resource.service       |
| get_permit_history     | GET /permits/{n}/history     | permit.resource.service       |
| watch_permit           | POST /permits/{n}/watch      | watch.service.enroll          |
| unwatch_permit         | DELETE /permits/{n}/watch    | watch.service.unwatch         |
| list_watches           | GET /permits/watches         | watch.service.list_watches    |
| get_operation          | GET /operations/{id}         | permit.operation.service      |

A handler returns the REST answer's body (`structuredContent`) or raises the REST twin's
ApiError (an `isError` result, see `results`). Entitlements, limits, metering and settlement are
the services'; nothing here decides them.

A status lookup that becomes an operation (a slow portal on a cache miss, a forced refresh) is
waited for within the call, up to OPERATION_WAIT_SECONDS, with a progress notification per poll
when the caller sent a progress token; a finished lookup answers its status record. Past the
bound (or with respond_async) the answer is the operation, which get_operation polls.
"""

from __future__ import annotations

import asyncio
import time
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
from permitapi.errors import NotFound
from permitapi.jurisdiction import service as jurisdictions
from permitapi.jurisdiction.schemas import JurisdictionList
from permitapi.mcp import render
from permitapi.mcp.auth import Access, Caller
from permitapi.mcp.schemas import (
    BatchInput,
    NoInput,
    OperationAccepted,
    OperationIdInput,
    PermitIdInput,
    PermitRef,
    SearchInput,
    StatusInput,
    ToolInput,
    WatchAnswer,
    input_schema,
    output_schema,
)
from permitapi.permit.identity import service as identity
from permitapi.permit.lookup import sandbox_or_live
from permitapi.permit.lookup import service as lookup
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.schemas import BatchResponse, PermitStatus
from permitapi.permit.lookup.service import StatusQuery
from permitapi.permit.operation import service as operations
from permitapi.permit.operation.schemas import OperationOut
from permitapi.permit.resource import service as resource
from permitapi.permit.resource.resolution import resolve_permit
from permitapi.permit.resource.schemas import (
    ConditionsResponse,
    HistoryResponse,
    InspectionsResponse,
    PermitResource,
    Resolution,
)
from permitapi.sources.registry import Directory
from permitapi.usage.auth_dependencies import record_meter
from permitapi.watch import service as watches
from permitapi.watch.schemas import WatchEnrolled, WatchList, WatchRemoved

# REST answers a 202 with `Retry-After: 2` (permit/lookup/endpoints.py): the same pause here.
POLL_AFTER_SECONDS = 2
# How long get_permit_status waits for an operation it started before answering it instead;
# well under the usual MCP client request timeout (60 s).
OPERATION_WAIT_SECONDS = 20.0
OPERATION_CHECK_SECONDS = 0.5
FINISHED = ("succeeded", "failed")

KEYLESS_NOTE = "No key: demo dataset only (daily cap)."
LIVE_KEY = "Live API key needed."
WATCH_CAPS = ", ".join(f"{name.value} {plan.active_watches}" for name, plan in PLANS.items())


Progress = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass
class ToolCall:
    """What a handler runs with: the app context, the HTTP request of the `tools/call`, the
    caller and the tracker of the call's lookup-credit reservation."""

    ctx: AppContext
    request: Request
    caller: Caller
    meter: MeterTracker = field(default_factory=MeterTracker)
    progress: Progress | None = None

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
    slug_pattern: bool = True

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.input_model, slug_pattern=self.slug_pattern)

    def output_schema(self) -> dict[str, Any]:
        return output_schema(*self.outputs)


def check_values(directory: Directory, args: ToolInput) -> None:
    """The number and slug rules of REST's identity resolution, applied before any entitlement
    (a sandbox refusal, force_refresh's plan check) or limit: a mistyped slug is
    invalid_jurisdiction with did_you_mean whoever calls."""
    if isinstance(args, PermitRef):
        identity.check_number(args.permit_number, location="arguments")
        if args.jurisdiction is not None:
            identity.explicit_jurisdiction(directory, args.jurisdiction)


def _json(model: BaseModel, *, exclude_none: bool = False) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", exclude_none=exclude_none)
    return dumped


# -- handlers ----------------------------------------------------------------------------------


def _poll_hint(operation_id: str) -> str:
    return (
        f"The portal is still being read. Call get_operation with operation_id={operation_id} "
        f"(free) after {POLL_AFTER_SECONDS} seconds until status is succeeded or failed; a "
        "succeeded operation's result is the status record. Once it has succeeded, "
        "get_permit_status answers from the cache."
    )


async def _operation(call: ToolCall, operation_id: str) -> dict[str, Any]:
    async with call.ctx.sessionmaker() as session:
        return await operations.get_for_owner(session, call.principal.api_key_id, operation_id)


async def _wait_for(call: ToolCall, accepted: dict[str, Any]) -> dict[str, Any]:
    """The operation once finished, or as it stands after OPERATION_WAIT_SECONDS."""
    started = time.monotonic()
    current = accepted
    step = 0
    while current["status"] not in FINISHED:
        waited = time.monotonic() - started
        if waited >= OPERATION_WAIT_SECONDS:
            break
        if call.progress is not None:
            step += 1
            await call.progress(
                float(step), None, f"Reading the portal: {current['status']} after {waited:.0f} s"
            )
        await asyncio.sleep(OPERATION_CHECK_SECONDS)
        current = await _operation(call, current["operation_id"])
    return current


async def _permit_status(call: ToolCall, args: StatusInput) -> dict[str, Any]:
    query = StatusQuery(
        permit_number=args.permit_number,
        jurisdiction=args.jurisdiction,
        force_refresh=args.force_refresh,
        near=lookup.parse_near(args.near),
        respond_async=args.respond_async,
    )
    item = await sandbox_or_live.permit_status(call.ctx, call.principal, query, call.meter)
    if item.kind == "record":
        return item.body
    if item.kind == "operation":
        current = item.body
        if not (args.respond_async and args.force_refresh):
            current = await _wait_for(call, current)
        result = current.get("result")
        if current["status"] == "succeeded" and isinstance(result, dict):
            if "code" not in result:
                return result  # the status record
            raise NotFound(  # the portal confirmed there is no such permit
                str(result.get("detail", "")),
                code=str(result["code"]),
                extra={"jurisdiction": result.get("jurisdiction")},
            )
        return {
            **current,
            "retry_after_seconds": POLL_AFTER_SECONDS,
            "poll_hint": _poll_hint(current["operation_id"]),
        }
    assert item.error is not None
    raise item.error


async def _get_operation(call: ToolCall, args: OperationIdInput) -> dict[str, Any]:
    body = await _operation(call, str(uuid.UUID(args.operation_id)))
    return _json(OperationOut.model_validate(body))


async def _batch(call: ToolCall, args: BatchInput) -> dict[str, Any]:
    return await sandbox_or_live.batch_status(
        call.ctx, call.principal, args.permit_numbers, call.meter
    )


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
    return _json(await resource.canonical_permit(call.ctx, call.principal, permit_id, call.meter))


async def _inspections(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await resource.inspections(
        call.ctx, call.principal, args.permit_number, args.jurisdiction, call.meter
    )
    return _json(found)


async def _conditions(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await resource.conditions(
        call.ctx, call.principal, args.permit_number, args.jurisdiction, call.meter
    )
    return _json(found)


async def _history(call: ToolCall, args: PermitRef) -> dict[str, Any]:
    found = await resource.history(
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
            "Status of one permit by number. Call it first: the detail tools read what it "
            "stored. An ambiguous number fails multiple_jurisdictions with candidates: call "
            "again with `jurisdiction`. A slow portal (aca:*) is waited for up to "
            f"{OPERATION_WAIT_SECONDS:g} s, then answered as an operation for get_operation. "
            "Cost: 1 credit (refunded if the portal is down); force_refresh 10. " + KEYLESS_NOTE
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
            f"Status of up to {BATCH_MAX_PERMITS} auto-detected permit numbers: each lands in "
            "`results`, `errors` (code, retryable, jurisdiction hint) or `operations` (poll "
            "with get_operation). Cost: 1 credit per number, refunded for invalid ones. "
            + KEYLESS_NOTE
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
            "Every supported city and county: slug (the `jurisdiction` argument), name, "
            "platform, state. Free; no key needed."
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
            "Find permits without a number in the City (ladbs) or County (epicla) of Los "
            "Angeles: by parcel, zip, lat/lon/radius_mi, type, issue dates, valuation, status "
            "or scope alone; newest first, paged with `cursor`. Thin hits: get_permit_status "
            "has the full record. Cost: 1 discovery search per page "
            f"({FREE_DISCOVERY_ALLOWANCE} a month without the add-on); inconclusive results are "
            "free and say when to retry. " + LIVE_KEY
        ),
        input_model=SearchInput,
        outputs=(SearchResponse,),
        access=Access.THROTTLED,
        annotations=_READ_PORTAL,
        handler=_search,
        render=render.search,
        meter=Meter.DISCOVERY,
        slug_pattern=False,
    ),
    Tool(
        name="resolve_permit",
        title="Canonical permit id",
        description=(
            "A permit number's stable canonical permit_id (for get_canonical_permit) and "
            "whether a stored copy exists. No portal read. Free. " + KEYLESS_NOTE
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
            "The canonical permit by permit_id: each value with its provenance (source, when "
            "observed). Reads the stored copy: run get_permit_status first. Cost: 1 credit, "
            "refunded when nothing is stored. " + LIVE_KEY
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
            "Completed and scheduled inspections and the pass rate, from the stored copy (run "
            "get_permit_status first). Cost: 1 credit, refunded when nothing is stored. " + LIVE_KEY
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
            "Conditions and holds (outstanding, met) from the stored copy (run "
            "get_permit_status first); observed=false: the source publishes none. Cost: 1 "
            "credit, refunded when nothing is stored. " + LIVE_KEY
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
            "Status timeline and workflow activities from the stored copy (run "
            "get_permit_status first). Cost: 1 credit, refunded when nothing is stored. " + LIVE_KEY
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
            "Monitor a permit daily: its changes reach this key's events feed and webhooks. "
            "Idempotent (newly_watched=false when already watched). Free; active watches are "
            f"capped per plan ({WATCH_CAPS}). Live, non-sandbox key needed."
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
            "Stop monitoring a permit this key watches (watch_not_found otherwise); frees a "
            "slot. Free. " + LIVE_KEY
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
            "The permits this key watches, the plan's cap and the slots left. Free. " + LIVE_KEY
        ),
        input_model=NoInput,
        outputs=(WatchList,),
        access=Access.UNTHROTTLED,
        annotations=_READ,
        handler=_list_watches,
        render=render.watches,
    ),
    Tool(
        name="get_operation",
        title="Poll a permit lookup",
        description=(
            "A lookup handed back as an operation: pending, running, succeeded (result: the "
            "status record) or failed (error, retryable). Call every few seconds until "
            "finished. Free; only the key that started it sees it."
        ),
        input_model=OperationIdInput,
        outputs=(OperationOut,),
        access=Access.UNTHROTTLED,
        annotations=_READ,
        handler=_get_operation,
        render=render.operation,
        slug_pattern=False,
    ),
)

BY_NAME = {tool.name: tool for tool in TOOLS}
