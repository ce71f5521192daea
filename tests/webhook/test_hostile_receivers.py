"""Whatever a receiver answers (any status, Retry-After, other headers, body size or encoding)
ends as a recorded attempt on a real delivery, a delivery still dies after eight attempts, and
POST test / simulate answer 200. Hypothesis draws the answers; a real receiver on loopback
sends them."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.kit.retry_after import MAX_RETRY_AFTER_SECONDS
from permitapi.webhook import schedule
from permitapi.webhook.jobs import DeliveryJobs
from tests.support.receiver import Answer, Receiver
from tests.webhook.conftest import new_key, register
from tests.webhook.test_delivery import deliveries, emit

HOSTILE_RETRY_AFTER = (
    "99999999999999999999",
    "\u00b2",
    "\u0661\u0662\u0660",
    "-1",
    "1e9",
    "9" * 5000,
)
CAP = timedelta(seconds=MAX_RETRY_AFTER_SECONDS)


def _wire(text: str) -> str:
    """The UTF-8 bytes of `text` as the receiver's latin-1 header writer sends them; header
    line breaks are left out (they would end the header, not test its value)."""
    return text.replace("\r", "").replace("\n", "").encode().decode("latin-1")


HEADER_VALUES = st.one_of(
    st.sampled_from(HOSTILE_RETRY_AFTER),
    st.text(max_size=60),
    st.text(alphabet=st.characters(categories=["Nd", "No"]), min_size=1, max_size=30),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.datetimes().map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
).map(_wire)
ANSWERS = st.builds(
    Answer,
    # 410 disables the webhook (its own test); 1xx are interim answers, not answers.
    status=st.integers(min_value=200, max_value=599).filter(lambda s: s != 410),
    headers=st.fixed_dictionaries(
        {"Retry-After": HEADER_VALUES},
        optional={name: HEADER_VALUES for name in ("Content-Encoding", "Content-Type", "X-Any")},
    ),
    body=st.one_of(st.binary(max_size=2048), st.just(b"\xff" * 100_000)),
)


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def test_any_receiver_answer_is_a_recorded_attempt(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    probe = f"/api/v1/webhooks/{hook['webhook_id']}/test"
    loop = asyncio.get_running_loop()

    async def one(answer: Answer) -> None:
        # Earlier examples' retries are not this example's business: end them.
        async with ctx.engine.begin() as connection:
            await connection.execute(
                text("UPDATE webhook_deliveries SET status = 'dead' WHERE status = 'pending'")
            )
        clock.advance(timedelta(seconds=1))  # newest first in the listing
        receiver.answer("/hook", answer)
        await emit(ctx, key)
        assert await DeliveryJobs().run_due(ctx) == 1
        found = await deliveries(client, key, hook["webhook_id"])
        assert all(d["attempts"] == 1 for d in found), found
        newest = found[0]
        assert newest["last_status_code"] in (answer.status, None)
        if newest["status"] == "pending":
            assert _at(newest["next_attempt_at"]) <= clock.now() + CAP + timedelta(minutes=1)
        else:
            assert newest["status"] == "delivered"
        tested = await client.post(probe, headers=key.headers)
        assert tested.status_code == 200, tested.text

    # Hypothesis drives a synchronous test in a thread; each example runs on this event loop.
    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(answer=ANSWERS)
    def each(answer: Answer) -> None:
        asyncio.run_coroutine_threadsafe(one(answer), loop).result(timeout=60)

    await asyncio.to_thread(each)


async def test_a_huge_or_unicode_retry_after_is_capped_and_the_delivery_still_dies(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    await emit(ctx, key)
    for attempt in range(1, schedule.MAX_ATTEMPTS + 1):
        value = HOSTILE_RETRY_AFTER[attempt % len(HOSTILE_RETRY_AFTER)]
        receiver.answer("/hook", Answer(status=503, headers={"Retry-After": _wire(value)}))
        assert await DeliveryJobs().run_due(ctx) == 1
        [delivery] = await deliveries(client, key, hook["webhook_id"])
        assert delivery["attempts"] == attempt
        assert delivery["last_status_code"] == 503
        if attempt < schedule.MAX_ATTEMPTS:
            assert delivery["status"] == "pending"
            due = _at(delivery["next_attempt_at"])
            assert due <= clock.now() + max(CAP, schedule.WINDOW_EDGES[attempt])
            clock.set(due)
    assert delivery["status"] == "dead"
    assert len(receiver.on("/hook")) == schedule.MAX_ATTEMPTS


async def test_test_and_simulate_answer_whatever_the_receiver_sends(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    base = f"/api/v1/webhooks/{hook['webhook_id']}"
    for value in HOSTILE_RETRY_AFTER:
        receiver.answer("/hook", Answer(status=503, headers={"Retry-After": _wire(value)}))
        tested = await client.post(f"{base}/test", headers=key.headers)
        assert tested.status_code == 200, tested.text
        assert tested.json() == {"success": False, "status_code": 503, "error": "HTTP 503"}
        simulated = await client.post(
            f"{base}/simulate", json={"event": "status_change"}, headers=key.headers
        )
        assert simulated.status_code == 200, simulated.text
        body: dict[str, Any] = simulated.json()
        assert body["delivery"]["status_code"] == 503
