"""Tenant isolation, generated from the route table: every operation of /openapi.json is
classified, and every key-scoped resource is read, changed or deleted with another account's
key and must answer 404 (existence not revealed), while its owner still reaches it.

A new endpoint fails `test_every_operation_is_classified` until it is put in one of the
tables below, so a key-scoped resource cannot be forgotten.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest

from permitapi.account import service as account_service
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.event import repository as event_repository
from permitapi.event import service as events
from permitapi.permit.operation import service as operations
from permitapi.saved_search import service as saved_search_service
from permitapi.usage import service as usage
from permitapi.webhook import repository as webhook_repository
from permitapi.webhook import service as webhook_service
from tests.support.accounts import make_account

# Path parameters that name the caller's own resources. Value: how to create one for `owner`.
Factory = Callable[["Tenants", httpx.AsyncClient, AppContext], Awaitable[str]]


@dataclass(frozen=True)
class Tenant:
    api_key_id: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Tenants:
    owner: Tenant
    other: Tenant


async def _operation(tenants: Tenants, client: httpx.AsyncClient, ctx: AppContext) -> str:
    async with ctx.transaction() as session:
        created = await operations.create(
            session,
            api_key_id=tenants.owner.api_key_id,
            jurisdiction="aca:sandiego",
            permit_number="PMT-3200001",
            force_refresh=False,
            reserved_period=None,
            reserved_units=0,
            now=ctx.clock.now(),
        )
    return str(created["operation_id"])


async def _webhook(tenants: Tenants, client: httpx.AsyncClient, ctx: AppContext) -> str:
    # A loopback receiver, refused at send time under these settings: test and simulate
    # answer at once without reaching any network.
    async with ctx.transaction() as session:
        created = await webhook_service.register(
            session,
            await _principal(ctx, tenants.owner),
            checked_url="http://127.0.0.1:9/hook",
            events=["status_change"],
            jurisdiction_filter=None,
            now=ctx.clock.now(),
        )
    _latest_webhook[tenants.owner.api_key_id] = str(created["webhook_id"])
    return str(created["webhook_id"])


_latest_webhook: dict[str, str] = {}


async def _delivery(tenants: Tenants, client: httpx.AsyncClient, ctx: AppContext) -> str:
    """A dead delivery of the owner's newest webhook (the one `_webhook` just made)."""
    async with ctx.transaction() as session:
        webhook_id = _latest_webhook[tenants.owner.api_key_id]
        await events.emit(
            session,
            "status_change",
            data={},
            occurred_at=ctx.clock.now(),
            recipients=[tenants.owner.api_key_id],
        )
        await webhook_repository.kill_pending(session, webhook_id, "test: ended")
        [delivery] = await webhook_repository.deliveries_of(session, webhook_id, 1)
    return delivery.delivery_id


async def _principal(ctx: AppContext, tenant: Tenant) -> account_service.Principal:
    async with ctx.sessionmaker() as session:
        principal = await account_service.resolve_key(session, tenant.headers["X-API-Key"])
    assert principal is not None
    return principal


async def _saved_search(tenants: Tenants, client: httpx.AsyncClient, ctx: AppContext) -> str:
    async with ctx.transaction() as session:
        created = await saved_search_service.create(
            session,
            await _principal(ctx, tenants.owner),
            name="Isolated",
            criteria={"city": "Los Angeles"},
            now=ctx.clock.now(),
        )
    return str(created["saved_search_id"])


OWNED_PARAMETERS: dict[str, Factory] = {
    "operation_id": _operation,
    "webhook_id": _webhook,
    "delivery_id": _delivery,
    "saved_search_id": _saved_search,
}
# Path parameters that name shared, public data (any key may read any permit's status).
SHARED_PARAMETERS = frozenset({"permit_number", "permit_id", "slug"})
# Operations without an owned path parameter that still answer per key: lists of the key's own
# resources. Value: the ids of the caller's resources in a response body.
KEY_SCOPED_LISTS: dict[tuple[str, str], Callable[[Any], set[str]]] = {
    ("GET", "/api/v1/webhooks"): lambda body: {w["webhook_id"] for w in body["webhooks"]},
    ("GET", "/api/v1/events"): lambda body: {e["event_id"] for e in body["events"]},
    ("GET", "/api/v1/saved-searches"): lambda body: {
        s["saved_search_id"] for s in body["saved_searches"]
    },
}
# Operations that create a key-scoped resource from a body (their answers are the caller's
# own; reading them back is covered above).
KEY_SCOPED_CREATIONS = frozenset({("POST", "/api/v1/webhooks"), ("POST", "/api/v1/saved-searches")})
# Key-scoped operations on a shared permit number: a key's watch of a permit is checked
# against another key's view in tests/watch/test_watch_api.py (list, DELETE 404).
KEY_SCOPED_BY_PERMIT = frozenset(
    {
        ("POST", "/api/v1/permits/{permit_number}/watch"),
        ("DELETE", "/api/v1/permits/{permit_number}/watch"),
        ("GET", "/api/v1/permits/watches"),
    }
)
# Operations that expose no tenant's data: public reads, lookups of shared permits, meters
# (each key reads its own; tested in tests/account/test_auth_and_usage.py), probes.
UNSCOPED = frozenset(
    {
        ("GET", "/api/v1/permits/{permit_number}/status"),
        ("POST", "/api/v1/permits/batch-status"),
        ("GET", "/api/v1/permits/search"),
        ("GET", "/api/v1/jurisdictions"),
        ("GET", "/api/v1/jurisdictions/requests"),
        ("POST", "/api/v1/jurisdictions/request"),
        ("GET", "/api/v1/jurisdictions/coverage"),
        ("GET", "/api/v1/jurisdictions/{slug}/stats"),
        ("GET", "/api/v1/jurisdictions/{slug}/analytics"),
        ("GET", "/api/v1/usage"),
        ("POST", "/api/v1/permit-resolutions"),
        ("GET", "/api/v1/permits/{permit_id}"),
        ("GET", "/api/v1/permits/{permit_number}/inspections"),
        ("GET", "/api/v1/permits/{permit_number}/conditions"),
        ("GET", "/api/v1/permits/{permit_number}/history"),
        ("GET", "/healthz"),
        ("GET", "/readyz"),
        ("GET", "/developers/status.json"),
    }
)
# A valid body for owned operations that take one, so that validation cannot answer first.
BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/api/v1/webhooks/{webhook_id}"): {"events": ["permit_approved"]},
    ("PATCH", "/api/v1/saved-searches/{saved_search_id}"): {"status": "paused"},
}
PARAMETER = re.compile(r"{([^}]+)}")


def operations_of(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def fill(path: str, values: dict[str, str]) -> str:
    """The path with owned parameters filled in and shared ones given a plausible permit."""
    return PARAMETER.sub(lambda m: values.get(m.group(1), "21030-20000-00256"), path)


def owned_parameters(path: str) -> list[str]:
    return [name for name in PARAMETER.findall(path) if name not in SHARED_PARAMETERS]


async def test_every_operation_is_classified(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    unclassified = []
    for method, path in operations_of(document):
        owned = owned_parameters(path)
        if owned:
            missing = [name for name in owned if name not in OWNED_PARAMETERS]
            if missing:
                unclassified.append(f"{method} {path}: no factory for {missing}")
        elif not any(
            (method, path) in known
            for known in (KEY_SCOPED_LISTS, UNSCOPED, KEY_SCOPED_CREATIONS, KEY_SCOPED_BY_PERMIT)
        ):
            unclassified.append(f"{method} {path}")
    assert not unclassified, "classify these operations:\n" + "\n".join(unclassified)


@pytest.fixture
async def tenants(ctx: AppContext) -> Tenants:
    accounts = [await make_account(ctx, "enterprise", discovery_addon=True) for _ in range(2)]
    resolved = []
    for account in accounts:
        async with ctx.sessionmaker() as session:
            principal = await account_service.resolve_key(session, account.live_key)
        assert principal is not None
        resolved.append(Tenant(principal.api_key_id, {"X-API-Key": account.live_key}))
    return Tenants(*resolved)


async def test_another_accounts_key_gets_404_on_every_owned_resource(
    client: httpx.AsyncClient, ctx: AppContext, tenants: Tenants
) -> None:
    document = (await client.get("/openapi.json")).json()
    checked = 0
    failures = []
    for method, path in operations_of(document):
        owned = owned_parameters(path)
        if not owned:
            continue
        values = {name: await OWNED_PARAMETERS[name](tenants, client, ctx) for name in owned}
        concrete = fill(path, values)
        body = BODIES.get((method, path))
        kwargs: dict[str, Any] = {} if body is None else {"json": body}
        as_other = await client.request(method, concrete, headers=tenants.other.headers, **kwargs)
        as_owner = await client.request(method, concrete, headers=tenants.owner.headers, **kwargs)
        checked += 1
        if as_other.status_code != 404:
            failures.append(f"{method} {path} as another key: {as_other.status_code}")
        if as_owner.status_code == 404:
            failures.append(f"{method} {path} as its owner: 404 (the resource was not reached)")
    assert checked >= 1
    assert not failures, "\n".join(failures)


async def test_key_scoped_lists_never_show_another_keys_resources(
    client: httpx.AsyncClient, ctx: AppContext, tenants: Tenants
) -> None:
    for (method, path), ids_in in KEY_SCOPED_LISTS.items():
        created = {await factory(tenants, client, ctx) for factory in OWNED_PARAMETERS.values()}
        async with ctx.sessionmaker() as session:  # the events those factories caused
            feed = await event_repository.feed_page(
                session,
                tenants.owner.api_key_id,
                after_seq=0,
                not_before=ctx.clock.now() - timedelta(days=30),
                limit=1000,
            )
        created |= {event.event_id for event in feed}
        owner_view = ids_in(
            (await client.request(method, path, headers=tenants.owner.headers)).json()
        )
        other_view = ids_in(
            (await client.request(method, path, headers=tenants.other.headers)).json()
        )
        assert owner_view & created, (method, path)
        assert not other_view & created, (method, path)


async def test_usage_is_the_callers_own(
    client: httpx.AsyncClient, ctx: AppContext, tenants: Tenants
) -> None:
    owner = await make_account(ctx, "pro")
    async with ctx.transaction() as session:
        principal = await account_service.resolve_key(session, owner.live_key)
        assert principal is not None
        await usage.reserve(session, principal, Meter.LOOKUP, 7, ctx.clock.now())
    mine = (await client.get("/api/v1/usage", headers={"X-API-Key": owner.live_key})).json()
    theirs = (await client.get("/api/v1/usage", headers=tenants.other.headers)).json()
    assert mine["lookup"]["used"] == 7
    assert theirs["lookup"]["used"] == 0
