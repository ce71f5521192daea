"""/readyz covers Redis when configured; log lines carry the request id in either format."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.kit.clock import FrozenClock
from permitapi.telemetry import logs
from tests.support.dev_server import free_port

REDIS_URL = "redis://127.0.0.1:6379/0"


async def _client_for(settings: Settings, clock: FrozenClock) -> AsyncIterator[httpx.AsyncClient]:
    application = create_app(settings, clock=clock)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http


@pytest.mark.parametrize(("redis_url", "status"), [(REDIS_URL, 200), ("closed", 503)])
async def test_readiness_covers_redis_when_configured(
    settings: Settings, clock: FrozenClock, redis_url: str, status: int
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0" if redis_url == "closed" else redis_url
    configured = settings.model_copy(update={"redis_url": url})
    async for client in _client_for(configured, clock):
        response = await client.get("/readyz")
        assert response.status_code == status
        if status == 503:
            assert response.json()["code"] == "redis_unavailable"
        else:
            assert response.json() == {"status": "ready"}


@pytest.fixture
def captured_root() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    yield stream
    root.handlers[:], level = saved
    root.setLevel(level)


@pytest.mark.parametrize("log_format", ["json", "text"])
async def test_every_line_of_a_request_carries_its_request_id(
    settings: Settings,
    clock: FrozenClock,
    captured_root: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
    log_format: logs.LogFormat,
) -> None:
    logs.configure(log_format)
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    monkeypatch.setattr(handler, "stream", captured_root)
    # A line logged deep in request handling: the readiness probe's Redis failure is one.
    broken = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})
    async for client in _client_for(broken, clock):
        response = await client.get("/readyz", headers={"X-Request-ID": "trace-readyz-0001"})
        assert response.status_code == 503
        logging.getLogger("permitapi.test").info("outside any request")
    lines = [line for line in captured_root.getvalue().splitlines() if line.strip()]
    assert lines
    if log_format == "json":
        entries = [json.loads(line) for line in lines]
        in_request = [e for e in entries if e["request_id"] == "trace-readyz-0001"]
        assert in_request
        assert all(e["level"] in {"warning", "error"} for e in in_request)
        outside = [e for e in entries if e["message"] == "outside any request"]
        assert len(outside) == 1
        assert outside[0]["request_id"] is None
    else:
        assert any("[trace-readyz-0001]" in line for line in lines)
        assert any("[None] outside any request" in line for line in lines)
