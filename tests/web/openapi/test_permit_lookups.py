"""The OpenAPI document describes the lookup endpoints: response models, 202 and 300, and a
problem schema on every error status."""

from __future__ import annotations

from fastapi import FastAPI

PROBLEM = "application/problem+json"


def test_status_batch_and_operation_are_documented(app: FastAPI) -> None:
    schema = app.openapi()
    status = schema["paths"]["/api/v1/permits/{permit_number}/status"]["get"]["responses"]
    assert set(status) == {"200", "202", "300", "400", "401", "403", "404", "429", "503"}
    assert status["200"]["content"]["application/json"]["schema"]["$ref"].endswith("PermitStatus")
    assert status["202"]["content"]["application/json"]["schema"]["$ref"].endswith("OperationOut")
    assert status["300"]["content"][PROBLEM]["schema"]["$ref"].endswith(
        "MultipleJurisdictionsProblem"
    )
    for code in ("400", "401", "403", "404", "429", "503"):
        assert status[code]["content"][PROBLEM]["schema"]["$ref"].endswith("/Problem")
    batch = schema["paths"]["/api/v1/permits/batch-status"]["post"]["responses"]
    assert batch["200"]["content"]["application/json"]["schema"]["$ref"].endswith("BatchResponse")
    assert {"400", "401", "429"} <= set(batch)
    operation = schema["paths"]["/api/v1/operations/{operation_id}"]["get"]["responses"]
    assert {"200", "401", "404"} <= set(operation)
    freshness = schema["components"]["schemas"]["DataFreshness"]["properties"]
    assert len(freshness) == 9
    candidates = schema["components"]["schemas"]["MultipleJurisdictionsProblem"]["properties"]
    assert {"candidates", "example", "code"} <= set(candidates)
