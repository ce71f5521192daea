"""Requested jurisdictions: validation, normalisation, one vote per key, status and timeline."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.jurisdiction import service
from tests.foundation.test_problems import assert_problem
from tests.support.accounts import make_account

REQUEST = "/api/v1/jurisdictions/request"
LIST = "/api/v1/jurisdictions/requests"


def place() -> str:
    """A name no other test uses (the database lives for the whole session)."""
    return f"Testville {uuid.uuid4().hex[:10]}"


async def ask(
    client: httpx.AsyncClient, name: str, state: str = "OR", key: str | None = None
) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return await client.post(
        REQUEST, json={"jurisdiction_name": name, "state": state}, headers=headers
    )


async def listed(client: httpx.AsyncClient, name: str, state: str = "OR") -> dict[str, Any]:
    response = await client.get(LIST, params={"limit": 200})
    assert response.status_code == 200
    assert "x-ratelimit-limit" not in response.headers
    matches = [
        r
        for r in response.json()["requests"]
        if r["jurisdiction_name"].casefold() == name.casefold() and r["state_code"] == state
    ]
    assert len(matches) == 1, matches
    return matches[0]


async def test_anonymous_requests_raise_only_request_count(client: httpx.AsyncClient) -> None:
    name = place()
    first = await ask(client, name)
    assert first.status_code == 200
    assert first.json() == {
        "jurisdiction_name": name,
        "state_code": "OR",
        "request_count": 1,
        "unique_keys_count": 0,
        "status": "open",
        "estimated_timeline": service.ESTIMATED_TIMELINE["open"],
    }
    second = (await ask(client, name)).json()
    assert (second["request_count"], second["unique_keys_count"]) == (2, 0)
    entry = await listed(client, name)
    assert entry == {k: v for k, v in second.items() if k != "estimated_timeline"}


async def test_one_vote_per_key_and_a_repeat_changes_nothing(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    name = place()
    one = await make_account(ctx, "free")
    two = await make_account(ctx, "pro")
    assert (await ask(client, name, key=one.live_key)).json()["request_count"] == 1
    repeat = (await ask(client, name, key=one.live_key)).json()
    assert (repeat["request_count"], repeat["unique_keys_count"]) == (1, 1)
    other = (await ask(client, name, key=two.live_key)).json()
    assert (other["request_count"], other["unique_keys_count"]) == (2, 2)
    anonymous = (await ask(client, name)).json()
    assert (anonymous["request_count"], anonymous["unique_keys_count"]) == (3, 2)


async def test_names_are_normalised(client: httpx.AsyncClient) -> None:
    suffix = uuid.uuid4().hex[:8]
    first = (await ask(client, f"San Jose {suffix}", "CA")).json()
    for variant in (f"  san  jose {suffix} ", f"SAN JOSE {suffix}", f"City of San Jose {suffix}"):
        again = (await ask(client, variant, "ca")).json()
        assert again["jurisdiction_name"] == f"San Jose {suffix}"  # the first spelling is shown
        assert again["state_code"] == "CA"
    assert again["request_count"] == 4
    assert first["request_count"] == 1
    # The same name in another state is another jurisdiction.
    assert (await ask(client, f"San Jose {suffix}", "NM")).json()["request_count"] == 1


async def test_status_moves_with_distinct_keys_only(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    name = place()
    for _ in range(12):
        await ask(client, name)
    assert (await listed(client, name))["status"] == "open"
    keys = [(await make_account(ctx, "free")).live_key for _ in range(service.PENDING_AT_KEYS)]
    seen = []
    for key in keys:
        body = (await ask(client, name, key=key)).json()
        seen.append((body["unique_keys_count"], body["status"], body["estimated_timeline"]))
    assert seen[service.INVESTIGATING_AT_KEYS - 2][1] == "open"
    assert seen[service.INVESTIGATING_AT_KEYS - 1][1] == "investigating"
    assert seen[service.INVESTIGATING_AT_KEYS - 1][2] == service.ESTIMATED_TIMELINE["investigating"]
    assert seen[service.PENDING_AT_KEYS - 2][1] == "investigating"
    assert seen[service.PENDING_AT_KEYS - 1] == (
        service.PENDING_AT_KEYS,
        "pending",
        service.ESTIMATED_TIMELINE["pending"],
    )
    entry = await listed(client, name)
    assert (entry["request_count"], entry["status"]) == (12 + service.PENDING_AT_KEYS, "pending")


async def test_parallel_votes_are_all_counted(client: httpx.AsyncClient, ctx: AppContext) -> None:
    name = place()
    keys = [(await make_account(ctx, "pro")).live_key for _ in range(8)]
    responses = await asyncio.gather(*(ask(client, name, key=key) for key in keys * 2))
    assert {r.status_code for r in responses} == {200}
    entry = await listed(client, name)
    assert (entry["request_count"], entry["unique_keys_count"]) == (8, 8)


async def test_sandbox_key_changes_nothing(client: httpx.AsyncClient, ctx: AppContext) -> None:
    name = place()
    account = await make_account(ctx, "pro")
    response = await ask(client, name, key=account.sandbox_key)
    assert response.status_code == 200
    assert response.json()["request_count"] == 0
    assert response.headers["x-sandbox-mode"] == "true"
    await ask(client, name)
    assert (await ask(client, name, key=account.sandbox_key)).json()["request_count"] == 1


async def test_authenticated_request_carries_rate_limit_headers(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    account = await make_account(ctx, "free")
    response = await ask(client, place(), key=account.live_key)
    assert response.headers["x-ratelimit-limit"] == "200"


async def test_invalid_key_is_401_even_though_a_key_is_optional(
    client: httpx.AsyncClient,
) -> None:
    assert_problem(await ask(client, place(), key="sk_live_nope"), 401, "invalid_api_key")


@pytest.mark.parametrize("state", ["ZZ", "California", "C", "", "  ", "XX", "c a", "UK"])
async def test_bad_state_is_400_naming_it(client: httpx.AsyncClient, state: str) -> None:
    body = assert_problem(await ask(client, place(), state), 400, "invalid_state")
    assert body["parameter"] == "state"


@pytest.mark.parametrize("state", ["pr", "DC", " tx ", "gu"])
async def test_territories_and_dc_are_states(client: httpx.AsyncClient, state: str) -> None:
    response = await ask(client, place(), state)
    assert response.status_code == 200
    assert response.json()["state_code"] == state.strip().upper()


@pytest.mark.parametrize("name", ["", "   ", "x" * 101, "12345", "bad\x00name", "\t\n"])
async def test_bad_name_is_400_naming_it(client: httpx.AsyncClient, name: str) -> None:
    body = assert_problem(await ask(client, name), 400, "invalid_jurisdiction_name")
    assert body["parameter"] == "jurisdiction_name"


@pytest.mark.parametrize(
    "body",
    [
        {"state": "CA"},
        {"jurisdiction_name": "Somewhere"},
        {"jurisdiction_name": 5, "state": "CA"},
        {"jurisdiction_name": "Somewhere", "state": "CA", "extra": 1},
        [],
    ],
)
async def test_malformed_body_is_400(client: httpx.AsyncClient, body: Any) -> None:
    assert_problem(await client.post(REQUEST, json=body), 400, "invalid_body")


async def test_not_json_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post(
        REQUEST, content=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert_problem(response, 400, "invalid_body")


@pytest.mark.parametrize(
    ("name", "state", "slug"),
    [
        ("San Diego", "CA", "aca:sandiego"),
        ("city of  los angeles", "CA", "ladbs"),
        ("Los Angeles County", "CA", "epicla"),
        ("Glendale", "AZ", "aca:glendale"),
        ("Washoe County", "NV", None),
        ("Kern County", "CA", None),
    ],
)
async def test_supported_jurisdiction_is_409(
    client: httpx.AsyncClient, ctx: AppContext, name: str, state: str, slug: str | None
) -> None:
    body = assert_problem(await ask(client, name, state), 409, "jurisdiction_already_supported")
    if slug is not None:
        assert body["slug"] == slug
    assert ctx.directory.get(str(body["slug"])) is not None


async def test_same_name_in_another_state_is_not_supported(client: httpx.AsyncClient) -> None:
    # aca:glendale is Glendale, AZ; Glendale, CA is not covered.
    response = await ask(client, "Glendale", "CA")
    assert response.status_code == 200


async def test_list_limit_is_validated(client: httpx.AsyncClient) -> None:
    for bad in ("0", "201", "ten"):
        body = assert_problem(
            await client.get(LIST, params={"limit": bad}), 400, "invalid_parameter"
        )
        assert body["parameter"] == "limit"


async def test_list_is_most_wanted_first(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = [(await make_account(ctx, "free")).live_key for _ in range(2)]
    popular, other = place(), place()
    for key in keys:
        await ask(client, popular, "WY", key=key)
    for _ in range(5):
        await ask(client, other, "WY")
    response = await client.get(LIST, params={"limit": 200})
    names = [r["jurisdiction_name"] for r in response.json()["requests"]]
    assert names.index(popular) < names.index(other)
