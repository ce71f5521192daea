"""Saved-search endpoints through the app on both databases: CRUD, validation with the search
endpoint's own codes, entitlements, plan caps, ownership, Idempotency-Key, no credits."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from permitapi.account import service as accounts
from permitapi.context import AppContext
from tests.saved_search.conftest import URL, Key, create, new_key, read, set_addon, usage
from tests.support.accounts import make_account
from tests.support.problems import assert_problem

SEARCH = "/api/v1/permits/search"
CRITERIA = {"city": "Los Angeles", "permit_type": "Electrical"}


async def key_without_addon(ctx: AppContext, plan: str = "developer") -> Key:
    created = await make_account(ctx, plan, discovery_addon=False)
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, created.live_key)
    assert principal is not None
    return Key(created.live_key, principal.api_key_id, created.sandbox_key)


async def test_create_read_list_update_delete(client: httpx.AsyncClient, ctx: AppContext) -> None:
    key = await new_key(ctx, "developer")
    created = await create(client, key, CRITERIA, name="  Electrical   in LA ")
    search_id = created["saved_search_id"]
    assert created["name"] == "Electrical in LA"
    assert created["criteria"] == CRITERIA
    assert created["status"] == "active"
    assert created["evaluation"] == {
        "state": "awaiting_baseline",
        "baseline_taken_at": None,
        "baseline_size": 0,
        "last_evaluated_at": None,
        "last_success_at": None,
        "last_match_at": None,
        "last_error": None,
    }
    assert await read(client, key, search_id) == created

    listed = (await client.get(URL, headers=key.headers)).json()
    assert [s["saved_search_id"] for s in listed["saved_searches"]] == [search_id]
    assert (listed["total"], listed["active"], listed["plan_limit"], listed["remaining"]) == (
        1, 1, 3, 2,
    )  # fmt: skip

    renamed = await client.patch(f"{URL}/{search_id}", json={"name": "LA"}, headers=key.headers)
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "LA"
    paused = await client.patch(
        f"{URL}/{search_id}", json={"status": "paused"}, headers=key.headers
    )
    assert paused.json()["status"] == "paused"
    assert paused.json()["evaluation"]["state"] == "paused"
    listed = (await client.get(URL, headers=key.headers)).json()
    assert (listed["total"], listed["active"], listed["remaining"]) == (1, 0, 3)
    unchanged = await client.patch(f"{URL}/{search_id}", json={}, headers=key.headers)
    assert unchanged.json()["status"] == "paused"

    deleted = await client.delete(f"{URL}/{search_id}", headers=key.headers)
    assert deleted.status_code == 200
    assert deleted.json() == {"status": "deleted", "saved_search_id": search_id}
    gone = await client.get(f"{URL}/{search_id}", headers=key.headers)
    assert_problem(gone, 404, "saved_search_not_found")
    again = await client.delete(f"{URL}/{search_id}", headers=key.headers)
    assert_problem(again, 404, "saved_search_not_found")
    assert (await client.get(URL, headers=key.headers)).json()["total"] == 0


# Each of these is answered by GET /permits/search with the same code.
SHARED_REFUSALS: list[tuple[dict[str, Any], str, str]] = [
    ({}, "filter_required", "criteria"),
    ({"contractor": "ACME"}, "unsupported_filter", "criteria.contractor"),
    ({"owner_name": "Smith"}, "unsupported_filter", "criteria.owner_name"),
    ({"colour": "red"}, "unsupported_filter", "criteria.colour"),
    ({"zip": "9"}, "invalid_zip", "criteria.zip"),
    ({"zip": ""}, "invalid_zip", "criteria.zip"),
    ({"parcel": ["123"]}, "invalid_parcel", "criteria.parcel"),
    ({"parcel": [f"{i:010d}" for i in range(26)]}, "too_many_parcels", "criteria.parcel"),
    ({"lat": 34.05, "lon": -118.2}, "incomplete_radius", "criteria.radius_mi"),
    ({"lat": 34.05, "lon": -118.2, "radius_mi": 30}, "invalid_radius_mi", "criteria.radius_mi"),
    ({"lat": 95, "lon": -118.2, "radius_mi": 1}, "invalid_lat", "criteria.lat"),
    ({"permit_type": "Solar"}, "invalid_permit_type", "criteria.permit_type"),
    ({"date_from": "2026-13-01"}, "invalid_date_from", "criteria.date_from"),
    ({"date_from": "2026-02-01", "date_to": "2026-01-01"}, "invalid_date_range",
     "criteria.date_to"),
    ({"value_min": 10, "value_max": 5}, "invalid_value_range", "criteria.value_max"),
    ({"value_min": -1}, "invalid_value_min", "criteria.value_min"),
    ({"city": "Pasadena"}, "invalid_city", "criteria.city"),
    ({"county": "Orange County"}, "invalid_county", "criteria.county"),
    ({"jurisdiction": "aca:sbc"}, "invalid_jurisdiction", "criteria.jurisdiction"),
    ({"city": "Los Angeles", "county": "Los Angeles County"}, "conflicting_scope",
     "criteria.county"),
    ({"status": "x" * 101}, "invalid_status", "criteria.status"),
    ({"zip": ["90012", "90013"]}, "invalid_zip", "criteria.zip"),
]  # fmt: skip
# Shapes only a JSON object can take, refused with the code of the filter they are given for.
OBJECT_REFUSALS: list[tuple[dict[str, Any], str, str]] = [
    ({"limit": 5, "city": "Los Angeles"}, "unsupported_filter", "criteria.limit"),
    ({"cursor": "v1.x.y", "city": "Los Angeles"}, "unsupported_filter", "criteria.cursor"),
    ({"zip": True}, "invalid_zip", "criteria.zip"),
    ({"zip": None}, "invalid_zip", "criteria.zip"),
    ({"zip": {"code": "90012"}}, "invalid_zip", "criteria.zip"),
    ({"parcel": []}, "invalid_parcel", "criteria.parcel"),
    ({"parcel": [["5432012019"]]}, "invalid_parcel", "criteria.parcel"),
    ({"value_min": 1e400}, "invalid_value_min", "criteria.value_min"),
]


def as_query(criteria: dict[str, Any]) -> list[tuple[str, str]]:
    items = []
    for name, value in criteria.items():
        for element in value if isinstance(value, list) else [value]:
            items.append((name, str(element)))
    return items


@pytest.mark.parametrize(("criteria", "code", "parameter"), SHARED_REFUSALS)
async def test_bad_criteria_get_the_search_endpoints_codes(
    client: httpx.AsyncClient,
    ctx: AppContext,
    criteria: dict[str, Any],
    code: str,
    parameter: str,
) -> None:
    key = await new_key(ctx, "pro")
    search = await client.get(SEARCH, params=as_query(criteria), headers=key.headers)
    assert_problem(search, 400, code)
    response = await client.post(
        URL, json={"name": "bad", "criteria": criteria}, headers=key.headers
    )
    body = assert_problem(response, 400, code)
    assert body["parameter"] == parameter
    assert body["errors"] == [
        {"parameter": parameter, "location": "body", "message": body["errors"][0]["message"]}  # type: ignore[index]
    ]
    # a PATCH with the same criteria is refused the same way, and changes nothing
    created = await create(client, key, CRITERIA)
    path = f"{URL}/{created['saved_search_id']}"
    patched = await client.patch(path, json={"criteria": criteria}, headers=key.headers)
    assert assert_problem(patched, 400, code)["parameter"] == parameter
    assert (await read(client, key, created["saved_search_id"]))["criteria"] == CRITERIA
    assert (await usage(client, key))["discovery"] == 0  # refusals cost nothing


@pytest.mark.parametrize(("criteria", "code", "parameter"), OBJECT_REFUSALS)
async def test_criteria_values_a_query_cannot_carry_are_refused(
    client: httpx.AsyncClient,
    ctx: AppContext,
    criteria: dict[str, Any],
    code: str,
    parameter: str,
) -> None:
    key = await new_key(ctx, "pro")
    if criteria.get("value_min") == 1e400:  # JSON has no infinity: send the literal
        response = await client.post(
            URL,
            content=b'{"name": "bad", "criteria": {"value_min": 1e400}}',
            headers={**key.headers, "content-type": "application/json"},
        )
    else:
        response = await client.post(
            URL, json={"name": "bad", "criteria": criteria}, headers=key.headers
        )
    assert assert_problem(response, 400, code)["parameter"] == parameter


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"name": "x", "criteria": ["city", "Los Angeles"]}, "invalid_body"),
        ({"criteria": CRITERIA}, "invalid_body"),
        ({"name": "", "criteria": CRITERIA}, "invalid_body"),
        ({"name": "x", "criteria": CRITERIA, "extra": 1}, "invalid_body"),
        ({"name": "   ", "criteria": CRITERIA}, "invalid_name"),
        ({"name": "a\u0000b", "criteria": CRITERIA}, "invalid_name"),
        ({"name": "n" * 101, "criteria": CRITERIA}, "invalid_name"),
    ],
)
async def test_bad_bodies(
    client: httpx.AsyncClient, ctx: AppContext, body: dict[str, Any], code: str
) -> None:
    key = await new_key(ctx, "pro")
    assert_problem(await client.post(URL, json=body, headers=key.headers), 400, code)
    created = await create(client, key)
    path = f"{URL}/{created['saved_search_id']}"
    bad_status = await client.patch(path, json={"status": "deleted"}, headers=key.headers)
    assert_problem(bad_status, 400, "invalid_body")


async def test_the_name_limit_is_one_number_in_schema_validation_and_storage(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    assert schemas["SavedSearchCreate"]["properties"]["name"]["maxLength"] == 100
    update_name = schemas["SavedSearchUpdate"]["properties"]["name"]
    stated = [update_name, *update_name.get("anyOf", [])]
    assert {part.get("maxLength") for part in stated} - {None} == {100}
    key = await new_key(ctx, "pro")
    longest = "n" * 100
    created = await create(client, key, CRITERIA, name=longest)
    assert created["name"] == longest
    assert (await read(client, key, created["saved_search_id"]))["name"] == longest
    path = f"{URL}/{created['saved_search_id']}"
    for name in ("n" * 101, "n" * 150, "n " * 60):  # the last collapses to 119 characters
        refused = await client.post(URL, json={"name": name, "criteria": CRITERIA},
                                    headers=key.headers)  # fmt: skip
        assert assert_problem(refused, 400, "invalid_name")["parameter"] == "name"
        renamed = await client.patch(path, json={"name": name}, headers=key.headers)
        assert_problem(renamed, 400, "invalid_name")


async def test_equivalent_criteria_are_accepted_in_any_spelling(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await new_key(ctx, "pro")
    criteria = {
        "county": "los angeles  county",
        "parcel": "5432-012-019",
        "zip": "90012-1234",
        "lat": 34,
        "lon": -118.25,
        "radius_mi": 2.5,
        "permit_type": "building",
        "date_from": "2026-01-01",
        "value_min": 0,
        "status": "issued",
    }
    created = await create(client, key, criteria)
    assert created["criteria"] == criteria  # kept as sent


async def test_free_and_add_on_less_keys_cannot_create_or_update(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    free = await new_key(ctx, "free")
    refused = await client.post(URL, json={"name": "x", "criteria": CRITERIA}, headers=free.headers)
    body = assert_problem(refused, 403, "saved_search_not_available")
    assert (
        "paid plan" in str(body["upgrade_hint"]).lower()
        or "upgrade" in str(body["upgrade_hint"]).lower()
    )
    no_addon = await key_without_addon(ctx)
    refused = await client.post(
        URL, json={"name": "x", "criteria": CRITERIA}, headers=no_addon.headers
    )
    body = assert_problem(refused, 403, "saved_search_not_available")
    assert "add-on" in str(body["upgrade_hint"])
    # listing works and shows nothing to create
    listed = (await client.get(URL, headers=free.headers)).json()
    assert (listed["total"], listed["plan_limit"], listed["remaining"]) == (0, 0, 0)


async def test_sandbox_keys_are_refused_everywhere(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await new_key(ctx, "pro")
    created = await create(client, key)
    path = f"{URL}/{created['saved_search_id']}"
    sandbox = {"X-API-Key": key.sandbox}
    for method, target, body in [
        ("POST", URL, {"name": "x", "criteria": CRITERIA}),
        ("GET", URL, None),
        ("GET", path, None),
        ("PATCH", path, {"status": "paused"}),
        ("DELETE", path, None),
    ]:
        response = await client.request(method, target, json=body, headers=sandbox)
        assert_problem(response, 403, "sandbox_not_supported")
        assert response.headers["x-sandbox-mode"] == "true"
    assert (await read(client, key, created["saved_search_id"]))["status"] == "active"


async def test_after_the_add_on_is_disabled_list_get_delete_still_work(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await new_key(ctx, "developer")
    first = await create(client, key, name="first")
    second = await create(client, key, name="second")
    await set_addon(ctx, key, enabled=False)

    listed = (await client.get(URL, headers=key.headers)).json()
    assert sorted(s["name"] for s in listed["saved_searches"]) == ["first", "second"]
    assert {s["evaluation"]["state"] for s in listed["saved_searches"]} == {"suspended"}
    got = await read(client, key, first["saved_search_id"])
    assert got["evaluation"]["state"] == "suspended"
    patched = await client.patch(
        f"{URL}/{first['saved_search_id']}", json={"status": "paused"}, headers=key.headers
    )
    assert_problem(patched, 403, "saved_search_not_available")
    created = await client.post(URL, json={"name": "x", "criteria": CRITERIA}, headers=key.headers)
    assert_problem(created, 403, "saved_search_not_available")
    deleted = await client.delete(f"{URL}/{second['saved_search_id']}", headers=key.headers)
    assert deleted.status_code == 200
    assert (await client.get(URL, headers=key.headers)).json()["total"] == 1

    await set_addon(ctx, key, enabled=True)
    assert (await read(client, key, first["saved_search_id"]))["evaluation"]["state"] == (
        "awaiting_baseline"
    )


async def test_plan_cap_counts_active_searches_and_resuming_takes_a_slot(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await new_key(ctx, "developer")
    made = [await create(client, key, name=f"s{i}") for i in range(3)]
    over = await client.post(URL, json={"name": "s3", "criteria": CRITERIA}, headers=key.headers)
    body = assert_problem(over, 400, "saved_search_limit_reached")
    assert body["plan_limit"] == 3
    assert "Upgrade" in str(body["upgrade_hint"])

    first = f"{URL}/{made[0]['saved_search_id']}"
    assert (await client.patch(first, json={"status": "paused"}, headers=key.headers)).is_success
    await create(client, key, name="s3")  # the paused one freed its slot
    resumed = await client.patch(first, json={"status": "active"}, headers=key.headers)
    assert_problem(resumed, 400, "saved_search_limit_reached")
    assert (await read(client, key, made[0]["saved_search_id"]))["status"] == "paused"
    listed = (await client.get(URL, headers=key.headers)).json()
    assert (listed["total"], listed["active"], listed["remaining"]) == (4, 3, 0)


async def test_another_keys_search_is_not_found(client: httpx.AsyncClient, ctx: AppContext) -> None:
    owner, other = await new_key(ctx, "pro"), await new_key(ctx, "pro")
    created = await create(client, owner)
    path = f"{URL}/{created['saved_search_id']}"
    for method, body in [("GET", None), ("PATCH", {"status": "paused"}), ("DELETE", None)]:
        response = await client.request(method, path, json=body, headers=other.headers)
        assert_problem(response, 404, "saved_search_not_found")
    assert (await client.get(URL, headers=other.headers)).json()["saved_searches"] == []
    assert (await read(client, owner, created["saved_search_id"]))["status"] == "active"


async def test_idempotent_creation(client: httpx.AsyncClient, ctx: AppContext) -> None:
    key = await new_key(ctx, "pro")
    headers = {**key.headers, "Idempotency-Key": "create-once"}
    body = {"name": "once", "criteria": CRITERIA}
    first = await client.post(URL, json=body, headers=headers)
    again = await client.post(URL, json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    assert (await client.get(URL, headers=key.headers)).json()["total"] == 1
    reused = await client.post(URL, json={**body, "name": "twice"}, headers=headers)
    assert_problem(reused, 422, "idempotency_key_reuse")


async def test_crud_costs_no_credits_and_no_burst(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await new_key(ctx, "pro")
    before = await usage(client, key)
    created = await create(client, key)
    path = f"{URL}/{created['saved_search_id']}"
    await client.get(URL, headers=key.headers)
    await client.get(path, headers=key.headers)
    await client.patch(path, json={"criteria": {"zip": "90012"}}, headers=key.headers)
    response = await client.delete(path, headers=key.headers)
    assert response.headers["x-ratelimit-limit"] == "1500"  # the discovery meter's figure
    assert await usage(client, key) == before
