"""What a cache miss costs the database: the permits row is read once per step of the lookup
(reserve and plan, refresh, settle), and the jurisdiction is resolved once, with the fast path
on (its raw-driver exchange counts as the first step's read) and off."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from permitapi.context import AppContext
from permitapi.permit.lookup import service as lookup
from permitapi.permit.lookup.fast import repository as hot_repository
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"
URL = f"/api/v1/permits/{LADBS}/status"
PERMITS_READ = re.compile(r"^\s*SELECT\b.*\bFROM permits\b", re.DOTALL)


@pytest.fixture
def permits_reads(ctx: AppContext, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every read of the permits table: SQLAlchemy's statements and the fast path's exchange."""
    reads: list[str] = []

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if PERMITS_READ.match(statement):
            reads.append(statement)

    for name in ("pg_reserve_and_read", "sqlite_reserve_and_read"):
        exchange = getattr(hot_repository, name)

        def counted(*args: Any, _exchange: Any = exchange, **kwargs: Any) -> Any:
            reads.append("fast path exchange")
            return _exchange(*args, **kwargs)

        monkeypatch.setattr(hot_repository, name, counted)
    engine = ctx.engine.sync_engine
    event.listen(engine, "before_cursor_execute", on_execute)
    yield reads
    event.remove(engine, "before_cursor_execute", on_execute)


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each resolution of the jurisdiction: an explicit slug looked up, or a number detected."""
    calls: list[str] = []
    explicit, detect = lookup.explicit_jurisdiction, lookup.detected

    def explicit_counted(*args: Any) -> Any:
        calls.append("explicit")
        return explicit(*args)

    def detect_counted(*args: Any) -> Any:
        calls.append("detect")
        return detect(*args)

    monkeypatch.setattr(lookup, "explicit_jurisdiction", explicit_counted)
    monkeypatch.setattr(lookup, "detected", detect_counted)
    return calls


@pytest.mark.parametrize("fast_path", [True, False])
@pytest.mark.parametrize("jurisdiction", [None, "ladbs"])
async def test_a_miss_reads_the_row_once_per_step(
    client: httpx.AsyncClient,
    ctx: AppContext,
    portal: FakePortal,
    permits_reads: list[str],
    resolutions: list[str],
    monkeypatch: pytest.MonkeyPatch,
    fast_path: bool,
    jurisdiction: str | None,
) -> None:
    monkeypatch.setattr(ctx.settings, "fast_path", fast_path)
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "pro")).live_key
    params = {"jurisdiction": jurisdiction} if jurisdiction else {}
    permits_reads.clear()
    response = await client.get(URL, params=params, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    assert response.json()["source"] == "live_scrape"
    # reserve and plan (the fast path's exchange when on), the refresh's claim, the settlement
    assert len(permits_reads) == 3, permits_reads
    assert resolutions == ["explicit" if jurisdiction else "detect"]


@pytest.mark.parametrize("fast_path", [True, False])
async def test_an_ambiguous_number_is_detected_once(
    client: httpx.AsyncClient,
    ctx: AppContext,
    resolutions: list[str],
    monkeypatch: pytest.MonkeyPatch,
    fast_path: bool,
) -> None:
    monkeypatch.setattr(ctx.settings, "fast_path", fast_path)
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get("/api/v1/permits/BLD2024-001234/status", headers={"X-API-Key": key})
    assert response.status_code == 300, response.text
    assert resolutions == ["detect"]
