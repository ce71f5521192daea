"""HTTP answers from LADBS hosts -> payloads or typed source errors.

PortalHttp types timeouts, connection failures, throttling, walls and the retried 5xx codes;
what reaches these checks is the rest: any other code means a moved or changed endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from permitapi.sources.base import PortalChanged, RetryLater
from permitapi.sources.http import PortalHttp

SOURCE = "ladbs"


def check_status(response: httpx.Response, what: str) -> None:
    """Judge what PortalHttp lets through: it has already raised for timeouts, connection
    failures, 403, 429 and 500/502/503/504, so only other codes are left (501, 505, 4xx)."""
    code = response.status_code
    if code == 200:
        return
    if code >= 500:
        raise RetryLater(SOURCE, f"{what}: HTTP {code}", reason="server_error")
    raise PortalChanged(SOURCE, f"{what}: unexpected HTTP {code}")


async def get(
    http: PortalHttp, url: str, params: Mapping[str, str] | None, what: str
) -> httpx.Response:
    response = await http.request(SOURCE, "GET", url, params=params)
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
