"""Key-cache invalidation shared through Redis: a key deactivated or an account re-planned in
one process (the CLI, usually) is dropped from every API process's key cache at once, instead
of being served from a cache for up to its TTL.

One pub/sub channel per namespace carries `key:<hash>` and `account:<id>` messages, published
after the change has committed (a process that re-reads on the message must see the new row).
Pub/sub delivers only to connected subscribers, so a listener that lost its connection clears
its caches when it is back: whatever it missed meanwhile is re-read. Without Redis, or while it
is down, caches fall back to their TTL (account/key_cache.py), as with one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, Final

import redis.asyncio as redis
from redis.exceptions import RedisError

from permitapi.account.key_caches import (
    clear_everywhere,
    invalidate_account_everywhere,
    invalidate_everywhere,
)
from permitapi.kit import redis_outage

log = logging.getLogger("permitapi.account.key_invalidation")

RETRY_SECONDS: Final = redis_outage.RETRY_SECONDS
KEY_PREFIX: Final = "key:"
ACCOUNT_PREFIX: Final = "account:"


def channel(namespace: str) -> str:
    return f"{namespace}:keys:invalidate"


async def announce(redis_url: str, namespace: str, message: str) -> bool:
    """Publish one invalidation (`key:<hash>` or `account:<id>`); False when Redis did not
    answer (other processes then notice within their cache TTL)."""
    client: Any = redis_outage.client(redis_url)
    try:
        await client.publish(channel(namespace), message)
    except (RedisError, OSError) as error:
        log.warning(
            "Redis did not answer (%s): other processes' key caches expire on their own",
            type(error).__name__,
        )
        return False
    finally:
        await client.aclose()
    return True


def apply(message: str) -> None:
    """Drop what one message names from this process's caches."""
    if message.startswith(KEY_PREFIX):
        invalidate_everywhere(message.removeprefix(KEY_PREFIX))
    elif message.startswith(ACCOUNT_PREFIX):
        invalidate_account_everywhere(message.removeprefix(ACCOUNT_PREFIX))
    else:
        log.warning("ignored an unknown key invalidation message %r", message[:80])


async def listen(redis_url: str, namespace: str, subscribed: asyncio.Event | None = None) -> None:
    """Apply every message until cancelled; reconnect (and clear the caches) after a gap."""
    # No read timeout: a subscriber waits for messages indefinitely.
    client: Any = redis.from_url(redis_url, socket_connect_timeout=redis_outage.TIMEOUT_SECONDS)
    connected_before = False
    try:
        while True:
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(channel(namespace))
                    if connected_before:
                        # Messages published while we were away are lost to us.
                        clear_everywhere()
                    connected_before = True
                    if subscribed is not None:
                        subscribed.set()
                    async for message in pubsub.listen():
                        data = message.get("data")
                        if isinstance(data, bytes):
                            apply(data.decode("utf-8", "replace"))
            except (RedisError, OSError) as error:
                log.warning(
                    "key invalidations not received (%s): cached keys expire on their own "
                    "until Redis answers",
                    type(error).__name__,
                )
                await asyncio.sleep(RETRY_SECONDS)
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def listening(redis_url: str | None, namespace: str) -> AsyncIterator[None]:
    """Run `listen` for the lifetime of the block when Redis is configured."""
    if not redis_url:
        yield
        return
    task = asyncio.get_running_loop().create_task(listen(redis_url, namespace))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
