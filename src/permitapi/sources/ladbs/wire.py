"""HTTP answers from LADBS hosts -> payloads or typed source errors.

The shared HTTP module may already turn transport failures into `RetryLater`; these checks are
the LADBS-specific part (which status codes mean throttling, blocking or a moved endpoint) and
stay correct either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from permitapi.sources.base import Blocked, PortalChanged, RetryLater
from permitapi.sources.http import PortalHttp

SOURCE = "ladbs"


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return max(float(response.headers.get("Retry-After", default)), 0.0)
    except ValueError:
        return default


def check_status(response: httpx.Response, what: str) -> None:
    code = response.status_code
    if code == 200:
        return
    if code == 403:
        raise Blocked(SOURCE, f"{what}: HTTP 403 (access refused)")
    if code == 429:
        raise RetryLater(
            SOURCE, f"{what}: HTTP 429", retry_after=_retry_after(response, 60), reason="throttled"
        )
    if code == 503:
        body = response.text[:2000].casefold()
        reason = "maintenance" if "maintenance" in body else "down"
        raise RetryLater(
            SOURCE, f"{what}: HTTP 503", retry_after=_retry_after(response, 60), reason=reason
        )
    if code in (502, 504) or code >= 500:
        raise RetryLater(SOURCE, f"{what}: HTTP {code}", reason="server_error")
    raise PortalChanged(SOURCE, f"{what}: unexpected HTTP {code}")


async def get(
    http: PortalHttp, url: str, params: Mapping[str, str] | None, what: str
) -> httpx.Response:
    try:
        response = await http.request(SOURCE, "GET", url, params=params)
    except httpx.TimeoutException as exc:
        raise RetryLater(SOURCE, f"{what}: timed out", reason="timeout") from exc
    except httpx.TransportError as exc:
        raise RetryLater(SOURCE, f"{what}: {type(exc).__name__}", reason="down") from exc
    check_status(response, what)
    return response


def json_payload(response: httpx.Response, what: str) -> Any:
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise PortalChanged(SOURCE, f"{what}: answer is not JSON") from exc


def real_url(url: str, params: Mapping[str, str] | None = None) -> str:
    """The portal URL a value came from (provenance), never the simulator's image of it."""
    return str(httpx.URL(url, params=dict(params or {})))
