"""The Redis the suite shares (one server for every test process: each test that writes to it
takes a namespace of its own), and two app instances on one Redis, as two API processes are."""

from __future__ import annotations

import os
from contextlib import AsyncExitStack

import httpx
from fastapi import FastAPI

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock

REDIS_URL = os.environ.get("PERMITAPI_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")


async def two_instances(
    stack: AsyncExitStack, settings: Settings, clock: FrozenClock
) -> tuple[AppContext, httpx.AsyncClient, httpx.AsyncClient]:
    clients = []
    contexts = []
    for _ in range(2):
        app: FastAPI = create_app(settings, clock=clock)
        await stack.enter_async_context(app.router.lifespan_context(app))
        contexts.append(app.state.ctx)
        transport = httpx.ASGITransport(app=app)
        clients.append(
            await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url="http://testserver")
            )
        )
    return contexts[0], clients[0], clients[1]
