"""Every 400 naming a parameter lists it in `errors` with the `location` the documented
ParameterIssue schema requires (path, query, header or body), whichever layer raised it."""

from __future__ import annotations

import httpx
import pytest

from permitapi.context import AppContext
from tests.support.accounts import make_account
from tests.support.problems import assert_problem

TOO_LONG = "9" * 300


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "code", "parameter", "location"),
    [
        ("GET", f"/api/v1/permits/{TOO_LONG}/status", {}, "invalid_permit_number",
         "permit_number", "path"),
        ("GET", f"/api/v1/permits/{TOO_LONG}/inspections", {}, "invalid_permit_number",
         "permit_number", "path"),
        ("GET", f"/api/v1/permits/{TOO_LONG}/conditions", {}, "invalid_permit_number",
         "permit_number", "path"),
        ("GET", f"/api/v1/permits/{TOO_LONG}/history", {}, "invalid_permit_number",
         "permit_number", "path"),
        ("POST", "/api/v1/permit-resolutions", {"json": {"permit_number": TOO_LONG}},
         "invalid_body", "permit_number", "body"),
        ("POST", "/api/v1/permit-resolutions", {"json": {"permit_number": " "}},
         "invalid_permit_number", "permit_number", "body"),
        ("POST", "/api/v1/jurisdictions/request", {"json": {"jurisdiction_name": "",
         "state": "CA"}}, "invalid_jurisdiction_name", "jurisdiction_name", "body"),
        ("POST", "/api/v1/jurisdictions/request", {"json": {"jurisdiction_name": "Reno",
         "state": "CA"}, "headers": {"Idempotency-Key": "x" * 256}},
         "invalid_idempotency_key", "Idempotency-Key", "header"),
        ("GET", "/api/v1/permits/search", {"params": {"zip": "9"}}, "invalid_zip", "zip",
         "query"),
    ],
)  # fmt: skip
async def test_parameter_issues_carry_their_location(
    client: httpx.AsyncClient,
    ctx: AppContext,
    method: str,
    path: str,
    kwargs: dict[str, object],
    code: str,
    parameter: str,
    location: str,
) -> None:
    account = await make_account(ctx, "pro", discovery_addon=True)
    request = dict(kwargs)  # the parameters are shared by both backends' runs
    headers = {"X-API-Key": account.live_key, **request.pop("headers", {})}  # type: ignore[dict-item]
    response = await client.request(method, path, headers=headers, **request)  # type: ignore[arg-type]
    body = assert_problem(response, 400, code)
    assert body["parameter"] == parameter
    assert body["errors"] == [
        {"parameter": parameter, "location": location, "message": body["errors"][0]["message"]}  # type: ignore[index]
    ]
