"""Idempotency-Key: the reusable route, over a probe endpoint and the real jurisdiction POST."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse

from permitapi.account import service as accounts
from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.errors import BadRequest
from permitapi.idempotency import service
from permitapi.idempotency.route import idempotent_post
from permitapi.kit.clock import FrozenClock
from permitapi.usage.auth_dependencies import Ctx, MaybeAuthenticated
from tests.support.accounts import make_account
from tests.support.problems import assert_problem

PROBE = "/_probe/idempotent"


class Probe:
    """Counts runs of the probe endpoint; the body says how the run behaves."""

    def __init__(self) -> None:
        self.runs = 0
        self.release = asyncio.Event()
        self.started = asyncio.Event()


def probe_router(probe: Probe) -> APIRouter:
    router = APIRouter()

    @idempotent_post(router, PROBE, status_code=201)
    async def run(body: dict[str, Any], principal: MaybeAuthenticated, ctx: Ctx) -> JSONResponse:
        probe.runs += 1
        run_number = probe.runs
        probe.started.set()
        if body.get("hold"):
            await probe.release.wait()
        if body.get("fail"):
            raise BadRequest("asked to fail", code="probe_failed")
        if "status" in body:
            return JSONResponse({"run": run_number}, status_code=int(body["status"]))
        return JSONResponse(
            {"run": run_number, "echo": body, "account": principal and principal.account_id},
            status_code=201,
            headers={"Location": f"/things/{run_number}", "X-Probe": "kept"},
        )

    return router


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock, probe: Probe) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    application.include_router(probe_router(probe))
    async with application.router.lifespan_context(application):
        yield application


def client_from(app: FastAPI, address: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


# The database lives for the whole session: each test's keys get their own prefix.
_prefix = {"value": ""}


@pytest.fixture(autouse=True)
def fresh_keys() -> None:
    _prefix["value"] = uuid.uuid4().hex[:8] + "-"


def k(name: str) -> str:
    return _prefix["value"] + name


async def post(
    client: httpx.AsyncClient,
    body: Any,
    key: str | None = "key-1",
    *,
    raw: bool = False,
    **headers: str,
) -> httpx.Response:
    sent = dict(headers)
    if key is not None:
        sent["Idempotency-Key"] = key if raw else k(key)
    return await client.post(PROBE, json=body, headers=sent)


# -- header parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "key"),
    [
        (["abc"], "abc"),
        (['"abc"'], "abc"),
        (['"8e03978e-40d5-43e8-bc93-6894a57f9324"'], "8e03978e-40d5-43e8-bc93-6894a57f9324"),
        (['"with \\"quote\\" and \\\\"'], 'with "quote" and \\'),
        (["  padded  "], "padded"),
        (["x" * 255], "x" * 255),
        (["has space"], "has space"),
    ],
)
def test_keys_accepted(values: list[str], key: str) -> None:
    assert service.parse_key(values) == key


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ['""'],
        ["x" * 256],
        ['"' + "x" * 256 + '"'],
        ["a", "b"],
        ["a,b"],
        ['ab"c'],
        ['"a"b"'],
        ['"bad \\n escape"'],
        ["tab\there"],
        ["ünïcode"],
    ],
)
def test_keys_refused(values: list[str]) -> None:
    with pytest.raises(BadRequest) as caught:
        service.parse_key(values)
    assert caught.value.code == "invalid_idempotency_key"
    assert caught.value.extra["parameter"] == "Idempotency-Key"


def test_fingerprint_ignores_json_formatting_only() -> None:
    base = service.fingerprint("POST", "/p", "", b'{"a": 1, "b": [1, 2]}')
    assert service.fingerprint("POST", "/p", "", b'{"b":[1,2],"a":1}') == base
    assert service.fingerprint("POST", "/p", "", b'{"a": 2, "b": [1, 2]}') != base
    assert service.fingerprint("POST", "/q", "", b'{"a": 1, "b": [1, 2]}') != base
    assert service.fingerprint("POST", "/p", "x=1", b'{"a": 1, "b": [1, 2]}') != base
    assert service.fingerprint("POST", "/p", "", b"not json") != base


# -- the route ----------------------------------------------------------------------------------


async def test_without_a_key_every_request_runs(client: httpx.AsyncClient, probe: Probe) -> None:
    for _ in range(2):
        response = await post(client, {"a": 1}, key=None)
        assert response.status_code == 201
        assert "idempotent-replayed" not in response.headers
    assert probe.runs == 2


async def test_repeat_replays_status_headers_and_body(
    client: httpx.AsyncClient, probe: Probe
) -> None:
    first = await post(client, {"a": 1, "b": "x"}, X_Request_ID="first-request-id")
    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    again = await client.post(
        PROBE,
        content=b'{"b":"x",  "a":1}',
        headers={
            "Idempotency-Key": f'"{k("key-1")}"',  # the sf-string form names the same key
            "Content-Type": "application/json",
            "X-Request-ID": "second-request-id",
        },
    )
    assert probe.runs == 1
    assert again.status_code == 201
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == "/things/1"
    assert again.headers["x-probe"] == "kept"
    assert again.headers["content-type"] == "application/json"
    assert again.headers["x-request-id"] == "second-request-id"


async def test_different_body_is_422(client: httpx.AsyncClient, probe: Probe) -> None:
    assert (await post(client, {"a": 1})).status_code == 201
    assert_problem(await post(client, {"a": 2}), 422, "idempotency_key_reuse")
    assert probe.runs == 1
    # The stored response is untouched by the refused reuse.
    assert (await post(client, {"a": 1})).headers["idempotent-replayed"] == "true"


async def test_same_key_on_another_path_is_422(client: httpx.AsyncClient) -> None:
    assert (await post(client, {"a": 1})).status_code == 201
    response = await client.post(
        "/api/v1/jurisdictions/request",
        json={"jurisdiction_name": "Springfield", "state": "IL"},
        headers={"Idempotency-Key": k("key-1")},
    )
    assert_problem(response, 422, "idempotency_key_reuse")


async def test_failed_first_request_stores_nothing(client: httpx.AsyncClient, probe: Probe) -> None:
    assert_problem(await post(client, {"fail": True}), 400, "probe_failed")
    assert_problem(await post(client, {"fail": True}), 400, "probe_failed")
    assert probe.runs == 2
    # A non-2xx response returned (not raised) stores nothing either.
    assert (await post(client, {"status": 409}, key="key-2")).status_code == 409
    assert (await post(client, {"status": 409}, key="key-2")).status_code == 409
    assert probe.runs == 4
    # The key is free again: a corrected request runs, it is not a 422.
    fixed = await post(client, {"fail": False})
    assert fixed.status_code == 201
    assert probe.runs == 5


async def test_invalid_header_is_a_400_problem(client: httpx.AsyncClient, probe: Probe) -> None:
    for bad in ("", "x" * 256, "a,b"):
        body = assert_problem(
            await post(client, {"a": 1}, key=bad, raw=True), 400, "invalid_idempotency_key"
        )
        assert body["parameter"] == "Idempotency-Key"
    repeated = await client.post(
        PROBE, json={}, headers=[("Idempotency-Key", "a"), ("Idempotency-Key", "b")]
    )
    assert_problem(repeated, 400, "invalid_idempotency_key")
    assert probe.runs == 0


async def test_in_flight_duplicate_is_409_with_retry_after(
    client: httpx.AsyncClient, probe: Probe
) -> None:
    first = asyncio.create_task(post(client, {"hold": True}))
    await asyncio.wait_for(probe.started.wait(), 30)  # it holds its claim and is running
    duplicate = await post(client, {"hold": True})
    body = assert_problem(duplicate, 409, "idempotency_key_processing")
    assert body["retry_after"] == 1
    assert duplicate.headers["retry-after"] == "1"
    # A different body is refused even while the first is in flight.
    assert_problem(await post(client, {"hold": False}), 422, "idempotency_key_reuse")
    probe.release.set()
    assert (await first).status_code == 201
    assert probe.runs == 1
    assert (await post(client, {"hold": True})).headers["idempotent-replayed"] == "true"


async def test_concurrent_duplicates_run_exactly_once(
    client: httpx.AsyncClient, probe: Probe
) -> None:
    responses = await asyncio.gather(*(post(client, {"n": 7}) for _ in range(12)))
    assert probe.runs == 1
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 409}
    assert 201 in statuses
    bodies = {r.content for r in responses if r.status_code == 201}
    assert len(bodies) == 1


async def test_a_crashed_claim_blocks_only_until_its_lock_lapses(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, probe: Probe
) -> None:
    # A claim that is never completed: what a request leaves behind when its process dies.
    scope = service.scope_of(None, "127.0.0.1")
    fingerprint = service.fingerprint("POST", PROBE, "", b'{"a":1}')
    async with ctx.transaction() as session:
        await service.claim(
            session, scope=scope, key=k("key-1"), fingerprint=fingerprint, now=clock.now()
        )
    assert_problem(await post(client, {"a": 1}), 409, "idempotency_key_processing")
    clock.advance(service.LOCK_TIMEOUT - timedelta(seconds=1))
    assert_problem(await post(client, {"a": 1}), 409, "idempotency_key_processing")
    clock.advance(timedelta(seconds=1))
    assert (await post(client, {"a": 1})).status_code == 201
    assert probe.runs == 1


async def test_stored_response_expires_after_24_hours(
    client: httpx.AsyncClient, clock: FrozenClock, probe: Probe
) -> None:
    assert (await post(client, {"a": 1})).json()["run"] == 1
    clock.advance(timedelta(hours=24) - timedelta(seconds=1))
    assert (await post(client, {"a": 1})).headers["idempotent-replayed"] == "true"
    clock.advance(timedelta(seconds=1))
    # Expired: the row is replaced, and even a different body may now use the key.
    fresh = await post(client, {"a": 2})
    assert fresh.status_code == 201
    assert fresh.json()["run"] == 2
    assert "idempotent-replayed" not in fresh.headers


async def test_scope_is_the_api_key(
    client: httpx.AsyncClient, ctx: AppContext, probe: Probe
) -> None:
    one = await make_account(ctx, "pro")
    two = await make_account(ctx, "pro")
    first = await post(client, {"a": 1}, **{"X-API-Key": one.live_key})
    second = await post(client, {"a": 1}, **{"X-API-Key": two.live_key})
    anonymous = await post(client, {"a": 1})
    assert [r.json()["run"] for r in (first, second, anonymous)] == [1, 2, 3]
    assert second.json()["account"] == two.account_id
    replay = await post(client, {"a": 1}, **{"X-API-Key": one.live_key})
    assert replay.json()["account"] == one.account_id
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.headers["x-ratelimit-limit"] == "25000"


async def test_anonymous_scope_is_the_client_address(app: FastAPI, probe: Probe) -> None:
    async with client_from(app, "192.0.2.1") as one, client_from(app, "192.0.2.2") as two:
        assert (await post(one, {"a": 1})).json()["run"] == 1
        assert (await post(two, {"a": 1})).json()["run"] == 2
        assert (await post(one, {"a": 1})).headers["idempotent-replayed"] == "true"


async def test_deactivated_key_gets_401_not_a_replay(
    client: httpx.AsyncClient, ctx: AppContext, probe: Probe
) -> None:
    account = await make_account(ctx, "pro")
    assert (await post(client, {"a": 1}, **{"X-API-Key": account.live_key})).status_code == 201
    async with ctx.transaction() as session:
        await accounts.deactivate_key(session, account.live_key, ctx.clock.now())
    response = await post(client, {"a": 1}, **{"X-API-Key": account.live_key})
    assert_problem(response, 401, "invalid_api_key")


async def test_an_authenticated_call_counts_once_in_the_burst_window(
    client: httpx.AsyncClient, ctx: AppContext, probe: Probe
) -> None:
    # The route authenticates before the endpoint's own dependency does: one hit, not two.
    account = await make_account(ctx, "free")
    for n in range(3):
        response = await post(client, {"n": n}, key=f"k{n}", **{"X-API-Key": account.live_key})
        assert response.status_code == 201
    limited = await post(client, {"n": 4}, key="k4", **{"X-API-Key": account.live_key})
    assert_problem(limited, 429, "burst_limit_exceeded")
    assert probe.runs == 3


# -- the real endpoint --------------------------------------------------------------------------


async def test_concurrent_anonymous_duplicates_count_once(client: httpx.AsyncClient) -> None:
    body = {"jurisdiction_name": "Bozeman", "state": "MT"}
    headers = {"Idempotency-Key": "bozeman-1"}
    responses = await asyncio.gather(
        *(
            client.post("/api/v1/jurisdictions/request", json=body, headers=headers)
            for _ in range(10)
        )
    )
    assert {r.status_code for r in responses} <= {200, 409}
    listing = (await client.get("/api/v1/jurisdictions/requests")).json()["requests"]
    (bozeman,) = [r for r in listing if r["jurisdiction_name"] == "Bozeman"]
    assert bozeman["request_count"] == 1
    again = await client.post("/api/v1/jurisdictions/request", json=body, headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["request_count"] == 1


async def test_worker_purges_expired_rows(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    from permitapi.idempotency import repository
    from permitapi.idempotency.jobs import IdempotencyPurge

    assert (await post(client, {"a": 1})).status_code == 201
    scope = service.scope_of(None, "127.0.0.1")
    purge = IdempotencyPurge()
    await purge.run_due(ctx)
    async with ctx.sessionmaker() as session:
        assert await repository.find(session, scope, k("key-1")) is not None
    clock.advance(timedelta(hours=24) + IdempotencyPurge.interval)
    assert await purge.run_due(ctx) >= 1
    async with ctx.sessionmaker() as session:
        assert await repository.find(session, scope, k("key-1")) is None
    assert await purge.run_due(ctx) == 0  # not due again yet
