"""The generated Python client against a running server (run by tests/clients in the client
toolchain's virtualenv, with clients/python on PYTHONPATH; type-checked with mypy --strict).

    python smoke_client.py BASE_URL API_KEY NUMBER OTHER_NUMBER UNKNOWN_NUMBER

Looks NUMBER up, sends [OTHER_NUMBER, NUMBER, UNKNOWN_NUMBER] as a batch and runs a discovery
search (city=Los Angeles), looks up an ambiguous number (the 300's candidates) and, with a
plain unauthenticated Client, a demo number (the keyless demo), then prints what the client
decoded as one JSON object.
"""

from __future__ import annotations

import json
import sys

from permitapi_client import AuthenticatedClient, Client
from permitapi_client.api.discovery import search_permits
from permitapi_client.api.permits import batch_permit_status, get_permit_status
from permitapi_client.models import (
    BatchRequest,
    BatchResponse,
    MultipleJurisdictionsProblem,
    PermitStatus,
    SearchResponse,
)

AMBIGUOUS = "BLD24-00123"
DEMO_NUMBER = "21030-20000-00256"


def main(base_url: str, api_key: str, number: str, other: str, unknown: str) -> None:
    client = AuthenticatedClient(
        base_url=base_url,
        token=api_key,
        prefix="",
        auth_header_name="X-API-Key",
        raise_on_unexpected_status=True,
    )
    with client:
        status = get_permit_status.sync_detailed(number, client=client)
        assert status.status_code == 200, status.content
        record = status.parsed
        assert isinstance(record, PermitStatus), record
        batch = batch_permit_status.sync_detailed(
            client=client, body=BatchRequest(permit_numbers=[other, number, unknown])
        )
        assert batch.status_code == 200, batch.content
        assert isinstance(batch.parsed, BatchResponse), batch.parsed
        search = search_permits.sync_detailed(client=client, city="Los Angeles", limit=5)
        assert search.status_code == 200, search.content
        found = search.parsed
        assert isinstance(found, SearchResponse), found
        ambiguous = get_permit_status.sync_detailed(AMBIGUOUS, client=client)
        assert isinstance(ambiguous.parsed, MultipleJurisdictionsProblem), ambiguous.content
        candidates = ambiguous.parsed.candidates
    with Client(base_url=base_url, raise_on_unexpected_status=True) as keyless:
        demo = get_permit_status.sync_detailed(DEMO_NUMBER, client=keyless)
        assert isinstance(demo.parsed, PermitStatus), demo.content
    summary = {
        "status": {
            "permit_number": record.permit_number,
            "jurisdiction": record.jurisdiction,
            "status_phase": record.status_phase.value,
            "source": record.source.value,
            "age_seconds": record.data_freshness.age_seconds,
            "rate_limit_remaining": status.headers.get("X-RateLimit-Remaining"),
        },
        "batch": {
            "results": sorted(result.permit_number for result in batch.parsed.results),
            "errors": sorted(error.permit_number for error in batch.parsed.errors),
        },
        "search": {
            "result_count": found.result_count,
            "results": [[hit.jurisdiction, hit.permit_number] for hit in found.results],
        },
        "ambiguous": {
            "status": ambiguous.status_code.value,
            "candidates": [candidate.slug for candidate in candidates],
        },
        "keyless": {
            "permit_number": demo.parsed.permit_number,
            "demo_mode": demo.headers.get("X-Demo-Mode"),
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main(*sys.argv[1:6])
