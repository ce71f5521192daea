"""A real worker process (the `permitapi worker` loop: build_context + Worker.run_forever)
whose portal adapters are the in-memory fake, configured from the environment:

    FAKE_PORTAL_LATENCY  seconds each fetch takes
    FAKE_PERMITS         comma-separated slug=number pairs the fake portal knows

Used to kill a worker mid-operation; switch to `permitapi worker` against the portal
simulator once it is on main.
"""

from __future__ import annotations

import asyncio
import os
import signal

from permitapi.app import build_context
from permitapi.config import Settings
from permitapi.worker.runner import Worker
from tests.support.fake_portal import FakePortal, snapshot


async def main() -> None:
    ctx = build_context(Settings())
    portal = FakePortal().install(ctx)
    portal.latency = float(os.environ.get("FAKE_PORTAL_LATENCY", "0"))
    for pair in filter(None, os.environ.get("FAKE_PERMITS", "").split(",")):
        slug, number = pair.split("=", 1)
        portal.add(snapshot(slug, number))
    worker = Worker(ctx)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.stop)
    try:
        await worker.run_forever()
    finally:
        await ctx.engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
