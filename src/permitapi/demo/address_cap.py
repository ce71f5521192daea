"""Caps on keyless callers: calls per client address over a rolling 24 hours, shared through
Redis when it is configured (per process while it is not or is down). The demo and keyless
jurisdiction requests each count in their own bucket."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request

from permitapi.context import AppContext
from permitapi.demo.client_address import client_address
from permitapi.kit.burst import CountedVerdict

WINDOW_SECONDS: Final = 24 * 3600


async def count_call(
    request: Request, ctx: AppContext, bucket: str, limit: int
) -> tuple[str, CountedVerdict]:
    """Count one call for the caller's address: the address and the window's verdict."""
    address = client_address(request, ctx.settings.trusted_proxies)
    return address, await ctx.burst.hit_counted(bucket, address, limit, WINDOW_SECONDS)
