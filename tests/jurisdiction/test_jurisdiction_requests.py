"""Requested jurisdictions: validation, normalisation, one vote per key or keyless address, the
keyless daily cap, status and timeline.

The in-process client's peer (127.0.0.1) is a trusted proxy here, so X-Forwarded-For names the
keyless caller and one test can play several addresses."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.jurisdiction import service
from permitapi.kit.clock import FrozenClock
from tests.support.accounts import make_account
from tests.support.problems import assert_problem
from tests.support.shared_redis import REDIS_URL, two_instances

REQUEST = "/api/v1/jurisdictions/request"
LIST = "/api/v1/jurisdictions/requests"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"trusted_proxies": ["127.0.0.1"]})


def letters() -> str:
    """Ten random letters: place names hold no digits."""
    return uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop"))


def place() -> str:
    """A name no other test uses (the database lives for the whole session)."""
    return f"Testville {letters()}"


async def ask(
    client: httpx.AsyncClient,
    name: str,
    state: str = "OR",
    key: str | None = None,
    address: str = "198.51.100.1",
) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {"X-Forwarded-For": address}
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
    repeat = (await ask(client, name)).json()  # the same address: no second vote
    assert (repeat["request_count"], repeat["unique_keys_count"]) == (1, 0)
    second = (await ask(client, name, address="198.51.100.2")).json()
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
    suffix = letters()
    first = (await ask(client, f"San Jose {suffix}", "CA")).json()
    variants = (f"  san  jose {suffix} ", f"SAN JOSE {suffix}", f"City of San Jose {suffix}")
    for index, variant in enumerate(variants):
        again = (await ask(client, variant, "ca", address=f"203.0.113.{index}")).json()
        assert again["jurisdiction_name"] == f"San Jose {suffix}"  # the first spelling is shown
        assert again["state_code"] == "CA"
    assert again["request_count"] == 4
    assert first["request_count"] == 1
    # The first address asking again in another spelling is the same jurisdiction: no vote.
    assert (await ask(client, f"city of san jose {suffix}", "CA")).json()["request_count"] == 4
    # The same name in another state is another jurisdiction.
    assert (await ask(client, f"San Jose {suffix}", "NM")).json()["request_count"] == 1


async def test_status_moves_with_distinct_keys_only(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    name = place()
    for index in range(12):
        await ask(client, name, address=f"192.0.2.{index}")
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


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "x" * 101,
        "12345",
        "bad\x00name",
        "\t\n",
        "<img src=x onerror=alert(1)>",
        "Springfield 2",
        "Reno / Washoe",
        "San Jose!",
        "Town_of_X",
        "'; DROP TABLE jurisdiction_requests; --",
        "https://example.com",
        "\u202eevil",
        "Zoë\u200b",
        "...",
    ],
)
async def test_bad_name_is_400_naming_it(client: httpx.AsyncClient, name: str) -> None:
    body = assert_problem(await ask(client, name), 400, "invalid_jurisdiction_name")
    assert body["parameter"] == "jurisdiction_name"


@pytest.mark.parametrize(
    "name",
    ["Coeur d'Alene", "St. Louis", "Winston-Salem", "Cañon City", "Can\u0303on City", "Mäntsälä"],
)
async def test_place_names_with_accents_and_punctuation_are_accepted(
    client: httpx.AsyncClient, name: str
) -> None:
    response = await ask(client, f"{name} {letters()}", "CO")
    assert response.status_code == 200, response.text
    # An accent typed as a combining mark is stored composed (NFC).
    assert response.json()["jurisdiction_name"].startswith(name.replace("n\u0303", "ñ"))


async def test_keyless_requests_are_capped_per_address_per_day(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    ctx.settings = ctx.settings.model_copy(update={"anonymous_jurisdiction_requests_per_day": 3})
    address = "198.51.100.77"
    for _ in range(3):
        assert (await ask(client, place(), address=address)).status_code == 200
    # A refused name does not use the allowance up, nor does a sandbox or live key.
    assert (await ask(client, "12345", address=address)).status_code == 400
    refused = await ask(client, place(), address=address)
    body = assert_problem(refused, 429, "jurisdiction_request_limit_exceeded")
    assert 0 < int(refused.headers["retry-after"]) <= 24 * 3600
    assert body["retry_after_seconds"] == int(refused.headers["retry-after"])
    assert (await ask(client, place(), address="198.51.100.78")).status_code == 200
    account = await make_account(ctx, "pro")
    for _ in range(4):
        assert (await ask(client, place(), key=account.live_key)).status_code == 200


async def test_the_keyless_cap_and_votes_are_shared_by_api_processes_through_redis(
    settings: Settings, clock: FrozenClock
) -> None:
    shared = settings.model_copy(
        update={
            "redis_url": REDIS_URL,
            "redis_namespace": f"permitapi-test-{uuid.uuid4().hex}",
            "anonymous_jurisdiction_requests_per_day": 4,
        }
    )
    name = place()
    async with AsyncExitStack() as stack:
        _, first, second = await two_instances(stack, shared, clock)
        answers = [
            await (first if index % 2 else second).post(
                REQUEST,
                json={"jurisdiction_name": name, "state": "OR"},
                headers={"X-Forwarded-For": "203.0.113.50"},
            )
            for index in range(4)
        ]
        assert [a.json()["request_count"] for a in answers] == [1, 1, 1, 1]  # one vote
        for client in (first, second):
            refused = await ask(client, place(), address="203.0.113.50")
            assert_problem(refused, 429, "jurisdiction_request_limit_exceeded")


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
