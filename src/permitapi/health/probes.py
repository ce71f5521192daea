"""Pings of the service's dependencies, for /readyz and the metrics scrape."""

from __future__ import annotations

import asyncio

import redis.asyncio as redis

# A readiness probe must answer well within a load balancer's probe timeout.
REDIS_PING_SECONDS = 2.0


async def ping_redis(url: str) -> None:
    """Raise unless Redis answers PING within REDIS_PING_SECONDS."""
    client = redis.from_url(url, socket_connect_timeout=REDIS_PING_SECONDS)
    try:
        await asyncio.wait_for(client.ping(), timeout=REDIS_PING_SECONDS)  # type: ignore[arg-type]
    finally:
        await client.aclose()
