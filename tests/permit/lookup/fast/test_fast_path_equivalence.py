"""The fast path is a twin of the normal path: GET status answered by two real apps on the same
database and clock, one with `fast_path` on and one with it off, gives the same status, headers
and body bytes for several hundred requests (edge cases of every parameter, key kind, plan,
meter state, cache age and portal outcome).

Each request runs twice from the same state: the case's state is written, the fast app answers,
the state is written again, the normal app answers. Every request carries its own X-Request-ID
(echoed in the header and problem bodies), so only two things differ by nature and are masked:
a 202's operation id (a random uuid4 per operation, in the body and the Location header) and
the keyless demo's X-RateLimit-Reset (wall-clock based, see `_answer`).
"""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock, period_of
from permitapi.permit.lookup.fast import path as hot_path
from permitapi.sources.base import RetryLater
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot
from tests.support.permits import store

LADBS = "21030-20000-00256"
ACA = "BLD24-00123"  # ambiguous without a jurisdiction; browser-backed in aca:sandiego
NUMBERS = (
    LADBS,
    LADBS,
    " 21030-20000-00256",
    ACA,
    "BLD2024-001234",  # a format dozens of agencies share
    "ZZZ",
    "9" * 300,
)
ROW_OF = {LADBS: "ladbs", " 21030-20000-00256": "ladbs", ACA: "aca:sandiego"}
JURISDICTIONS = (None, None, None, "ladbs", "aca:sandiego", "nowhere", "")
FORCE_REFRESH = (None, None, None, None, "false", "0", "true", "1", "", "maybe")
NEAR = (None, None, None, "34.05,-118.25", "x")
PREFER = (None, None, None, "respond-async")
KEYS = ("live",) * 12 + ("sandbox", "none", "bogus", "deactivated", "deactivated_cached")
PLANS = (("free", False), ("developer", False), ("pro", False), ("enterprise", False),
         ("pro", True))  # fmt: skip
METERS = ("none", "zero", "below_limit", "at_limit", "over_limit")
CACHES = ("none", "fresh", "fresh", "fresh", "almost_expired", "expired", "stale", "failing",
          "bare")  # fmt: skip
PORTALS = ("ok", "ok", "down", "missing")
CASES = 360
KEYLESS_CASES = 12  # under the demo's daily cap of 30 per address, so none is refused for it

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True, slots=True)
class Case:
    number: str
    jurisdiction: str | None
    force_refresh: str | None
    near: str | None
    prefer: str | None
    key: str
    plan: tuple[str, bool]
    meter: str
    cache: str
    portal: str


def _cases() -> list[Case]:
    rng = random.Random(21)
    cases: list[Case] = []
    keyless = 0
    while len(cases) < CASES:
        key = rng.choice(KEYS)
        if key == "none":
            if keyless == KEYLESS_CASES:
                continue
            keyless += 1
        # Every third case is one the fast path may answer (a cache hit the number or slug
        # resolves without the database), with the other dimensions still drawn at random.
        hot = len(cases) % 3 == 0
        number = rng.choice((LADBS, ACA)) if hot else rng.choice(NUMBERS)
        cases.append(
            Case(
                number=number,
                jurisdiction=(
                    (ROW_OF[number] if number == ACA else rng.choice((None, "ladbs")))
                    if hot
                    else rng.choice(JURISDICTIONS)
                ),
                force_refresh=rng.choice((None, "false")) if hot else rng.choice(FORCE_REFRESH),
                near=rng.choice(NEAR),
                prefer=rng.choice(PREFER),
                key=key,
                plan=rng.choice(PLANS),
                meter=rng.choice(METERS),
                cache="fresh" if hot and rng.random() < 0.8 else rng.choice(CACHES),
                portal=rng.choice(PORTALS),
            )
        )
    return cases


@dataclass
class Twin:
    ctx: AppContext
    client: httpx.AsyncClient
    portal: FakePortal


@pytest.fixture
async def twins(settings: Settings, clock: FrozenClock) -> AsyncIterator[tuple[Twin, Twin]]:
    apps: list[FastAPI] = [
        create_app(settings.model_copy(update={"fast_path": fast}), clock=clock)
        for fast in (True, False)
    ]
    async with (
        apps[0].router.lifespan_context(apps[0]),
        apps[1].router.lifespan_context(apps[1]),
    ):
        pair = []
        for application in apps:
            transport = httpx.ASGITransport(app=application)
            client = httpx.AsyncClient(transport=transport, base_url="http://testserver")
            ctx: AppContext = application.state.ctx
            pair.append(Twin(ctx, client, FakePortal().install(ctx)))
        try:
            yield pair[0], pair[1]
        finally:
            for twin in pair:
                await twin.client.aclose()


@dataclass(frozen=True, slots=True)
class Account:
    live_key: str
    sandbox_key: str
    principal: accounts.Principal


async def _account(ctx: AppContext, plan: tuple[str, bool]) -> Account:
    created = await make_account(ctx, plan[0], overage=plan[1])
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, created.live_key)
    assert principal is not None
    return Account(created.live_key, created.sandbox_key, principal)


def _used(case: Case, limit: int) -> int | None:
    return {"none": None, "zero": 0, "below_limit": limit - 1, "at_limit": limit,
            "over_limit": limit + 5}[case.meter]  # fmt: skip


async def _prepare(twin: Twin, case: Case, account: Account) -> None:
    """Write the case's state from scratch: meter, cache row, key activity, portal."""
    ctx, now = twin.ctx, twin.ctx.clock.now()
    principal = account.principal
    async with ctx.transaction() as session:
        for table in ("permits", "operations", "domain_events", "coverage_observations",
                      "source_fetches"):  # fmt: skip
            await session.execute(text(f"DELETE FROM {table}"))
        await session.execute(
            text("DELETE FROM usage_meters WHERE api_key_id = :key"),
            {"key": principal.api_key_id},
        )
        used = _used(case, principal.limit(Meter.LOOKUP))
        if used is not None:
            await session.execute(
                text(
                    "INSERT INTO usage_meters (api_key_id, meter, period, used) "
                    "VALUES (:key, 'lookup', :period, :used)"
                ),
                {"key": principal.api_key_id, "period": period_of(now), "used": used},
            )
        await session.execute(
            text("UPDATE api_keys SET is_active = :active WHERE id = :key"),
            {"active": True, "key": principal.api_key_id},
        )
    await _cache_row(ctx, case)
    ctx.keys.clear()
    if case.key.startswith("deactivated"):
        if case.key == "deactivated_cached":
            # Cached while active, then deactivated by "another process": the reservation (or
            # the sandbox check) must refuse it.
            assert await ctx.keys.resolve(ctx.sessionmaker, account.live_key) is not None
        async with ctx.transaction() as session:
            await session.execute(
                text("UPDATE api_keys SET is_active = :active WHERE id = :key"),
                {"active": False, "key": principal.api_key_id},
            )
    twin.portal.permits.clear()
    twin.portal.fault = None
    jurisdiction = ROW_OF.get(case.number, "ladbs")
    if case.portal == "ok":
        twin.portal.add(snapshot(jurisdiction, case.number.strip(), "Plan Check"))
    elif case.portal == "down":
        twin.portal.fault = RetryLater(jurisdiction, "down", reason="down", retry_after=45)
    # "missing": the fake portal answers NotFoundAtSource for a permit it does not hold


async def _cache_row(ctx: AppContext, case: Case) -> None:
    jurisdiction = ROW_OF.get(case.number)
    if jurisdiction is None or case.cache == "none":
        return
    now = ctx.clock.now()
    age = {"fresh": timedelta(hours=1), "almost_expired": timedelta(hours=4, seconds=-1),
           "expired": timedelta(hours=4), "stale": timedelta(hours=5),
           "failing": timedelta(hours=5), "bare": timedelta(0)}[case.cache]  # fmt: skip
    await store(ctx, snapshot(jurisdiction, case.number.strip()), fetched_at=now - age)
    if case.cache == "failing":
        async with ctx.transaction() as session:
            await session.execute(
                text(
                    "UPDATE permits SET last_attempted_at = :at, "
                    "last_failure_reason = 'portal_unavailable'"
                ),
                {"at": (now - timedelta(seconds=10)).replace(tzinfo=None)},  # stored naive UTC
            )
    if case.cache == "bare":
        async with ctx.transaction() as session:
            await session.execute(
                text("UPDATE permits SET snapshot = NULL, fetched_at = NULL, raw_status = NULL")
            )


def _request(case: Case, account: Account, index: int) -> tuple[str, dict[str, str], Any]:
    headers = {"X-Request-ID": f"twin-{index:04d}"}
    if case.key in ("live", "deactivated", "deactivated_cached"):
        headers["X-API-Key"] = account.live_key
    elif case.key == "sandbox":
        headers["X-API-Key"] = account.sandbox_key
    elif case.key == "bogus":
        headers["X-API-Key"] = "sk_live_" + "0" * 40
    if case.prefer is not None:
        headers["Prefer"] = case.prefer
    params = [(name, value) for name, value in (
        ("jurisdiction", case.jurisdiction), ("force_refresh", case.force_refresh),
        ("near", case.near)) if value is not None]  # fmt: skip
    return f"/api/v1/permits/{case.number}/status", headers, params


def _answer(response: httpx.Response) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    body, headers = response.content, response.headers.raw
    if response.headers.get("X-Demo-Mode") == "true":
        # The demo's window is wall-clock (kit/burst.py: time.time() when the app counted its
        # first demo call, plus 24 h), not the app's clock: the two apps may straddle a second.
        headers = [(k, b"<wall clock>" if k == b"x-ratelimit-reset" else v) for k, v in headers]
    if response.status_code == 202:
        body = UUID.sub(b"<operation>", body)
        headers = [(k, UUID.sub(b"<operation>", v)) for k, v in headers]
    return response.status_code, sorted(headers), body


async def test_fast_path_answers_as_the_normal_path(
    twins: tuple[Twin, Twin], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, normal = twins
    fast_answers = 0
    reserve_and_read = hot_path.reserve_and_read

    async def counted(*args: Any, **kwargs: Any) -> hot_path.HotRead:
        nonlocal fast_answers
        read = await reserve_and_read(*args, **kwargs)
        fast_answers += read.reservation is not None and read.row is not None
        return read

    monkeypatch.setattr(hot_path, "reserve_and_read", counted)
    statuses: set[int] = set()
    for index, case in enumerate(_cases()):
        account = await _account(fast.ctx, case.plan)
        url, headers, params = _request(case, account, index)
        answers = []
        for twin in (fast, normal):
            await _prepare(twin, case, account)
            response = await twin.client.get(url, headers=headers, params=params)
            answers.append(_answer(response))
        assert answers[0] == answers[1], (index, case)
        statuses.add(answers[0][0])
    # The table reaches every kind of answer, and the fast path really answered many of them.
    assert {200, 202, 300, 400, 401, 404, 429, 503} <= statuses
    assert fast_answers >= 60
