"""50 parallel identical POSTs with one Idempotency-Key, on every endpoint that honours the
header (found in /openapi.json, so a new idempotent endpoint is covered or this test fails):
exactly one effect, one stored answer, and every other answer a replay of it or a 409
`idempotency_key_processing`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from permitapi.context import AppContext
from permitapi.webhook import repository as webhook_repository
from tests.webhook.conftest import new_key, register
from tests.webhook.test_delivery import emit

PARALLEL = 50


@dataclass
class Case:
    path: str
    headers: dict[str, str]
    body: Any
    effect: Callable[[], Awaitable[int]]


async def _jurisdiction_request(client: httpx.AsyncClient, ctx: AppContext) -> Case:
    # Anonymous, under a fresh name: the first request is the one vote of this address (a
    # second run would count nothing either, so the test's count of first answers is what
    # shows a duplicate run).
    name = "Idempotville " + uuid.uuid4().hex[:8].translate(
        str.maketrans("0123456789", "ghijklmnop")
    )

    async def count() -> int:
        listed = (await client.get("/api/v1/jurisdictions/requests")).json()["requests"]
        return sum(r["request_count"] for r in listed if r["jurisdiction_name"] == name)

    return Case(
        "/api/v1/jurisdictions/request", {}, {"jurisdiction_name": name, "state": "NV"}, count
    )


async def _webhook_registration(client: httpx.AsyncClient, ctx: AppContext) -> Case:
    key = await new_key(ctx, "pro")

    async def count() -> int:
        listed = await client.get("/api/v1/webhooks", headers=key.headers)
        return len(listed.json()["webhooks"])

    # A public address literal: registration resolves nothing and contacts nothing.
    body = {"url": "https://93.184.216.34/hook", "events": ["status_change"]}
    return Case("/api/v1/webhooks", key.headers, body, count)


async def _delivery_replay(client: httpx.AsyncClient, ctx: AppContext) -> Case:
    key = await new_key(ctx, "pro")
    hook = await register(client, key, "https://93.184.216.34/hook", ["status_change"])
    await emit(ctx, key)
    async with ctx.transaction() as session:
        await webhook_repository.kill_pending(session, str(hook["webhook_id"]), "test: ended")
    path = f"/api/v1/webhooks/{hook['webhook_id']}/deliveries"
    [original] = (await client.get(path, headers=key.headers)).json()["deliveries"]

    async def count() -> int:
        return len((await client.get(path, headers=key.headers)).json()["deliveries"])

    return Case(f"{path}/{original['id']}/replay", key.headers, None, count)


async def _saved_search(client: httpx.AsyncClient, ctx: AppContext) -> Case:
    key = await new_key(ctx, "pro")

    async def count() -> int:
        listed = await client.get("/api/v1/saved-searches", headers=key.headers)
        return int(listed.json()["total"])

    body = {"name": "Idempotent", "criteria": {"city": "Los Angeles"}}
    return Case("/api/v1/saved-searches", key.headers, body, count)


CASES: dict[tuple[str, str], Callable[[httpx.AsyncClient, AppContext], Awaitable[Case]]] = {
    ("POST", "/api/v1/jurisdictions/request"): _jurisdiction_request,
    ("POST", "/api/v1/webhooks"): _webhook_registration,
    ("POST", "/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/replay"): _delivery_replay,
    ("POST", "/api/v1/saved-searches"): _saved_search,
}


def idempotent_operations(document: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            names = {p.get("name") for p in operation.get("parameters", [])}
            if "Idempotency-Key" in names:
                found.append((method.upper(), path))
    return found


async def test_every_idempotent_endpoint_has_a_case(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operations = idempotent_operations(document)
    assert operations
    assert set(operations) == set(CASES), "add a case for each idempotent endpoint"


async def test_parallel_duplicates_have_exactly_one_effect(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    for (method, _), build in CASES.items():
        case = await build(client, ctx)
        before = await case.effect()
        headers = {**case.headers, "Idempotency-Key": f"parallel-{uuid.uuid4().hex}"}
        responses = await asyncio.gather(
            *(
                client.request(method, case.path, headers=headers, json=case.body)
                for _ in range(PARALLEL)
            )
        )
        assert await case.effect() - before == 1, case.path
        firsts = [r for r in responses if r.is_success and "idempotent-replayed" not in r.headers]
        replays = [r for r in responses if r.headers.get("idempotent-replayed") == "true"]
        busy = [r for r in responses if r.status_code == 409]
        assert len(firsts) == 1, [r.status_code for r in responses]
        assert len(firsts) + len(replays) + len(busy) == PARALLEL
        assert all(r.json()["code"] == "idempotency_key_processing" for r in busy)
        assert all(r.content == firsts[0].content for r in replays)
