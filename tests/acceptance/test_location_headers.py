"""Every 201 and 202 names its resource in `Location` (issue 23; the OpenAPI walk in
tests/web/openapi/test_typing.py holds the document to it): a registered webhook, a
saved search and a new watch, against a real `permitapi dev` server, and each Location
answers. (A replayed delivery's 202 points at the webhook's deliveries; it needs a finished
delivery, which the webhook suites make.)"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.acceptance.test_lookups_dev_server import fresh_permit
from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow


def _key(server: DevServer) -> dict[str, str]:
    created = server.cli("keys", "create", "--plan", "pro", "--discovery-addon", "--json")
    assert created.returncode == 0, created.stderr
    return {"X-API-Key": json.loads(created.stdout)["live_key"]}


def test_created_resources_are_named_in_location(server: DevServer, http: httpx.Client) -> None:
    auth = _key(server)
    webhook = http.post(
        "/api/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["status_change"]},
        headers=auth,
    )
    assert webhook.status_code == 201, webhook.text
    assert webhook.headers["Location"] == f"/api/v1/webhooks/{webhook.json()['webhook_id']}"
    # The webhook's URI is where it is changed and removed.
    assert http.delete(webhook.headers["Location"], headers=auth).status_code == 200

    saved = http.post(
        "/api/v1/saved-searches",
        json={"name": "Sunset corridor", "criteria": {"city": "Los Angeles"}},
        headers=auth,
    )
    assert saved.status_code == 201, saved.text
    assert saved.headers["Location"].endswith(saved.json()["saved_search_id"])
    assert http.get(saved.headers["Location"], headers=auth).json() == saved.json()

    number = fresh_permit(http, "ladbs")
    watched = http.post(f"/api/v1/permits/{number}/watch", headers=auth)
    assert watched.status_code == 201, watched.text
    assert watched.headers["Location"] == f"/api/v1/permits/{number}/watch?jurisdiction=ladbs"
    again = http.post(f"/api/v1/permits/{number}/watch", headers=auth)
    assert again.status_code == 200
    assert "Location" not in again.headers
    assert http.delete(watched.headers["Location"], headers=auth).status_code == 200
