"""Integer query parameters (`limit` of the events feed, webhook deliveries and requested
jurisdictions) take the digits 0-9 only: 400, not Python's reading of `1_0` as 10."""

from __future__ import annotations

import httpx

from permitapi.context import AppContext
from tests.support.problems import assert_problem
from tests.support.receiver import Receiver
from tests.webhook.conftest import new_key, register


async def test_integer_query_parameters_take_plain_digits_only(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    paths = (
        "/api/v1/jurisdictions/requests",
        f"/api/v1/webhooks/{hook['webhook_id']}/deliveries",
        "/api/v1/events",
    )
    for path in paths:
        ok = await client.get(path, params={"limit": "10"}, headers=key.headers)
        assert ok.status_code == 200, ok.text
        for limit in ("1_0", "10.0", "+10", "1e1", "\uff11\uff10"):
            response = await client.get(path, params={"limit": limit}, headers=key.headers)
            assert_problem(response, 400, "invalid_parameter")
