"""The portal simulator as the benchmarks serve it: `create_sim_app` with a fixed latency for
every family, in its own uvicorn process on loopback, plus a request counter.

- every portal path of `create_sim_app` (the adapters reach it through PERMITAPI_PORTAL_BASE_URL,
  as in `permitapi dev`), and its control API under `/_control`;
- `GET /_bench/requests`: portal requests received, by `<host>/<last path segment>` (so a LADBS
  lookup shows as one `PcisPermitDetail` page plus its Socrata reads); `POST` resets them.

Environment: BENCH_SIM_LATENCY_MS (added before every portal request), BENCH_SIM_LADBS_PERMITS
(generated LADBS permits; the batch bench needs fresh ones for every round).
"""

from __future__ import annotations

import os
from collections import Counter

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from permitapi.portalsim.app import create_sim_app


class _Counting:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path == "/_bench/requests":
                if scope["method"] == "POST":
                    self.requests.clear()
                await JSONResponse(dict(self.requests))(scope, receive, send)
                return
            if not path.startswith("/_control"):
                parts = path.strip("/").split("/")
                self.requests[f"{parts[0]}/{parts[-1]}"] += 1
        await self.app(scope, receive, send)


def create() -> ASGIApp:
    latency_ms = int(os.environ.get("BENCH_SIM_LATENCY_MS", "200"))
    ladbs = int(os.environ.get("BENCH_SIM_LADBS_PERMITS", "400"))
    sim = create_sim_app(
        latency_ms=latency_ms, permits_per_jurisdiction={"ladbs": ladbs, "epicla": 10, "aca": 3}
    )
    return _Counting(sim)
