"""Property-based contract check: schemathesis generates requests for EVERY operation of the
served /openapi.json and sends them to a real `permitapi dev` server (SQLite and PostgreSQL).

A case fails on any 5xx, on a status code the operation does not document, on a response body
that violates its documented schema (problems included), and on an undocumented content type.
Each operation gets schema-valid (positive) and schema-violating (negative) requests; examples
are bounded and derandomized so the run is repeatable and short. An operation added later is
covered without touching this file.
"""

from __future__ import annotations

import json
from itertools import product

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]
# Per operation. Enough to reach every parameter's invalid forms and the main answers; the
# enterprise plan's burst window (600 a minute) is never the limiting factor at this size.
MAX_EXAMPLES = 25


@pytest.fixture(scope="module")
def enterprise_key(server: DevServer) -> str:
    created = server.cli("keys", "create", "--plan", "enterprise", "--discovery-addon", "--json")
    assert created.returncode == 0, created.stderr
    key: str = json.loads(created.stdout)["live_key"]
    return key


@pytest.fixture(scope="module")
def api_schema(server: DevServer) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")


def test_every_operation_keeps_its_documented_contract(
    api_schema: schemathesis.BaseSchema, enterprise_key: str, http: httpx.Client
) -> None:
    # One hypothesis run per operation, driven here rather than by schemathesis' pytest
    # plugin (which does not support pytest 9): every operation's failures are gathered, so one
    # run shows them all.
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    served = http.get("/openapi.json").json()["paths"]
    assert len(operations) == sum(len(item) for item in served.values())
    for operation, mode in product(operations, GenerationMode):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )
        def check(case: schemathesis.Case) -> None:
            headers = dict(case.headers or {})
            headers.setdefault("X-API-Key", enterprise_key)
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=60)

        try:
            check()
        except Unsatisfiable:
            # No schema-violating request exists (no parameters, or only free-form strings).
            assert mode is GenerationMode.NEGATIVE, operation.label
        except (Exception, BaseExceptionGroup) as failure:  # all reported together below
            failures.append(f"{operation.label} ({mode.value} data): {failure}")
    assert not failures, "\n\n".join(failures)
