"""Webhook tests run the app in process against a real receiver on loopback. The clock starts
at the real time (receivers reject signatures whose timestamp is 5 minutes off) and moves only
when a test moves it; loopback http receivers are allowed, as under `permitapi dev`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from tests.conftest import TEST_SECRET
from tests.support.accounts import make_account
from tests.support.receiver import Receiver, running_receiver


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        environment="test",
        database_url=database_url,
        secret_key=TEST_SECRET,
        database_pool_size=10,
        allow_loopback_webhooks=True,
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


@dataclass(frozen=True)
class Key:
    value: str
    api_key_id: str
    sandbox: str

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.value}


async def new_key(ctx: AppContext, plan: str = "pro") -> Key:
    created = await make_account(ctx, plan, discovery_addon=plan != "free")
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, created.live_key)
    assert principal is not None
    return Key(created.live_key, principal.api_key_id, created.sandbox_key)


async def register(
    client: httpx.AsyncClient, key: Key, url: str, events: list[str] | None = None, **extra: object
) -> dict[str, object]:
    response = await client.post(
        "/api/v1/webhooks",
        json={"url": url, "events": events or ["status_change"], **extra},
        headers=key.headers,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert isinstance(body, dict)
    return body


@pytest.fixture
async def ctx(app: FastAPI) -> AppContext:
    """The app's context, after ending every delivery an earlier test left pending: the
    database is shared by the session, and those receivers are gone."""
    context: AppContext = app.state.ctx
    async with context.engine.begin() as connection:
        await connection.execute(
            text("UPDATE webhook_deliveries SET status = 'dead' WHERE status = 'pending'")
        )
    return context
