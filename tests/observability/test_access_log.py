"""The opt-in access log (PERMITAPI_ACCESS_LOG), and the log lines an operator should not see:
uvicorn's ANSI-coloured duplicates and httpx's line per request below DEBUG."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI

from permitapi.account import service as accounts
from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.telemetry import logs
from tests.support.accounts import make_account


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """Everything logged, as `serve` writes it (JSON lines at INFO)."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    logs.configure("json", "INFO")
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    monkeypatch.setattr(handler, "stream", stream)
    yield stream
    root.handlers[:], level = saved
    root.setLevel(level)


def entries(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


async def running_app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    async with application.router.lifespan_context(application):
        yield application


@pytest.mark.parametrize("enabled", [True, False])
async def test_access_log_one_line_per_request_with_key_id_never_the_key(
    settings: Settings, clock: FrozenClock, captured: io.StringIO, enabled: bool
) -> None:
    configured = settings.model_copy(update={"access_log": enabled})
    async for application in running_app(configured, clock):
        ctx: AppContext = application.state.ctx
        account = await make_account(ctx, "pro")
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            missing = await http.get(
                "/api/v1/operations/op_does_not_exist",
                headers={"X-API-Key": account.live_key, "X-Request-ID": "trace-access-0001"},
            )
            assert missing.status_code == 404
            wrong_key = "sk_live_" + "x" * 40
            refused = await http.get(
                "/api/v1/usage",
                headers={"X-API-Key": wrong_key, "X-Request-ID": "trace-access-0002"},
            )
            assert refused.status_code == 401
            health = await http.get("/healthz", headers={"X-Request-ID": "trace-access-0003"})
            assert health.status_code == 200
    access = [e for e in entries(captured) if e["logger"] == logs.ACCESS_LOGGER]
    text = captured.getvalue()
    assert account.live_key not in text
    assert wrong_key not in text
    if not enabled:
        assert access == []
        return
    by_request = {e["request_id"]: e for e in access}
    assert len(access) == 3
    assert set(by_request) == {"trace-access-0001", "trace-access-0002", "trace-access-0003"}
    looked_up = by_request["trace-access-0001"]
    assert looked_up["route"] == "/api/v1/operations/{operation_id}"
    assert looked_up["method"] == "GET"
    assert looked_up["status"] == 404
    assert looked_up["key_id"] == await key_id_of(ctx, account.live_key)
    assert isinstance(looked_up["latency_ms"], float)
    assert looked_up["latency_ms"] >= 0
    assert looked_up["level"] == "info"
    assert "op_does_not_exist" not in json.dumps(looked_up)  # the template, not the path
    assert by_request["trace-access-0002"]["status"] == 401
    assert by_request["trace-access-0002"]["key_id"] is None
    assert by_request["trace-access-0003"]["route"] == "/healthz"
    assert by_request["trace-access-0003"]["key_id"] is None


async def key_id_of(ctx: AppContext, raw_key: str) -> str:
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
    assert principal is not None
    return principal.api_key_id


def test_uvicorn_lines_follow_the_root_whatever_configured_uvicorn_before() -> None:
    uvicorn_error = logging.getLogger("uvicorn.error")
    uvicorn_error.setLevel(logging.WARNING)  # as uvicorn.Config(log_level="warning") leaves it
    uvicorn_error.disabled = True  # as a dictConfig with disable_existing_loggers leaves it
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    try:
        logs.configure("json", "INFO")
        handler = root.handlers[0]
        assert isinstance(handler, logging.StreamHandler)
        handler.stream = stream
        uvicorn_error.info("Started server process [%d]", 42)
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    assert [e["message"] for e in entries(stream)] == ["Started server process [42]"]


def test_uvicorn_color_message_is_never_written(captured: io.StringIO) -> None:
    coloured = "Uvicorn running on \x1b[1mhttp://127.0.0.1:8000\x1b[0m"
    logging.getLogger("uvicorn.error").info(
        "Uvicorn running on %s", "http://127.0.0.1:8000", extra={"color_message": coloured}
    )
    (entry,) = entries(captured)
    assert entry["message"] == "Uvicorn running on http://127.0.0.1:8000"
    assert "color_message" not in entry
    assert "\x1b" not in captured.getvalue()


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
def test_httpx_request_lines_are_debug(
    captured: io.StringIO, monkeypatch: pytest.MonkeyPatch, level: str
) -> None:
    logs.configure("json", level)
    handler = logging.getLogger().handlers[0]
    monkeypatch.setattr(handler, "stream", captured)
    transport = httpx.MockTransport(lambda request: httpx.Response(204))
    with httpx.Client(transport=transport) as client:
        assert client.get("http://portal.example/page").status_code == 204
    logging.getLogger("permitapi.test").info("after the request")
    lines = entries(captured)
    requests = [e for e in lines if e["logger"] == "httpx"]
    if level == "INFO":
        assert requests == []
    else:
        assert len(requests) == 1
        assert requests[0]["level"] == "debug"
        assert "HTTP Request: GET http://portal.example/page" in str(requests[0]["message"])
    assert [e["message"] for e in lines if e["logger"] == "permitapi.test"] == ["after the request"]
