"""PostgreSQL restarted under load, against a real `permitapi dev` server on a PostgreSQL of
the test's own: while the database is gone, requests answer 503 `database_unavailable`
problems quickly (never a 500, never a hang), and once it is back the same server process
answers 200 again without a restart."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.acceptance.test_lookups_dev_server import fresh_permit, status
from tests.support.dev_server import DevServer, dev_server
from tests.support.private_postgres import PrivatePostgres, private_postgres

pytestmark = pytest.mark.slow

# Well under any client's timeout: a request while the database is down must not hang.
QUICK_SECONDS = 5.0
OUTAGE_SECONDS = 3.0


@dataclass
class Answer:
    began: float
    seconds: float
    status: int
    code: str | None
    retry_after: str | None


@pytest.fixture(scope="module")
def database() -> Iterator[PrivatePostgres]:
    with private_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def server(
    database: PrivatePostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    workdir = tmp_path_factory.mktemp("restart")
    overrides = {"PERMITAPI_DATABASE_URL": database.url}
    with dev_server("sqlite", workdir, "--latency-ms", "0", env_overrides=overrides) as up:
        yield up


def test_requests_fail_fast_while_postgres_restarts_and_recover_without_a_restart(
    server: DevServer, database: PrivatePostgres
) -> None:
    # One enterprise key per load thread: their burst windows (600 a minute) stay out of the way.
    created = [server.cli("keys", "create", "--plan", "enterprise", "--json") for _ in range(4)]
    assert all(c.returncode == 0 for c in created), [c.stderr for c in created]
    keys = [json.loads(c.stdout)["live_key"] for c in created]
    key = keys[0]
    answers: list[Answer] = []
    stop = threading.Event()
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        number = fresh_permit(http, "ladbs")
        assert status(http, number, key).status_code == 200

        def load(key: str) -> None:
            with httpx.Client(base_url=server.base_url, timeout=30) as client:
                while not stop.is_set():
                    began = time.monotonic()
                    for path in (f"/api/v1/permits/{number}/status", "/api/v1/usage"):
                        response = client.get(path, headers={"X-API-Key": key})
                        body = response.json() if response.status_code >= 400 else {}
                        answers.append(
                            Answer(
                                began,
                                time.monotonic() - began,
                                response.status_code,
                                body.get("code"),
                                response.headers.get("retry-after"),
                            )
                        )
                    time.sleep(0.15)

        workers = [threading.Thread(target=load, args=(k,)) for k in keys]
        for worker in workers:
            worker.start()
        time.sleep(1.0)
        stopped_at = time.monotonic()
        database.stop()
        time.sleep(OUTAGE_SECONDS)
        database.start()
        restarted_at = time.monotonic()
        time.sleep(4.0)
        stop.set()
        for worker in workers:
            worker.join(timeout=60)

        during = [a for a in answers if stopped_at + 0.5 < a.began < restarted_at - 0.5]
        after = [a for a in answers if a.began > restarted_at + 2.0]
        assert during, "no request was made while the database was down"
        assert after, "no request was made after the database came back"
        unexpected = {a.status for a in answers} - {200, 503}
        assert not unexpected, [a for a in answers if a.status in unexpected][:3]
        assert all(a.seconds < QUICK_SECONDS for a in answers), max(a.seconds for a in answers)
        down = [a for a in during if a.status == 503]
        assert down, "the outage was never reported"
        assert {a.code for a in down} == {"database_unavailable"}
        assert all(a.retry_after and int(a.retry_after) > 0 for a in down)
        # The same server process answers again, with no restart.
        assert {a.status for a in after} == {200}
        assert status(http, number, key).status_code == 200
