"""`permitapi sources canary` as an operator runs it, against the portal simulator in its own
process (PERMITAPI_PORTAL_BASE_URL): no drift on plain pages and on script-only ones (read in
headless Chromium), exit 1 naming the field in each drift mode, exit 2 when nothing answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.canary import seed_canary_records
from tests.support.cli import cli_env, run_cli
from tests.support.dev_server import free_port
from tests.support.portal_sim import running_portal_sim

DRIFTS = [
    # (jurisdiction, drift, the field the canary must name)
    ("ladbs", {"kind": "rename_label", "target": "Type", "to": "Kind"}, "permit_type"),
    ("epicla", {"kind": "drop_column", "target": "APPLY_DATE"}, "applied_date"),
    ("aca:kingco", {"kind": "layout", "target": "table"}, "address"),
]


@pytest.fixture(scope="module")
def sim() -> Iterator[str]:
    with running_portal_sim() as url:
        yield url


@pytest.fixture
async def control(sim: str) -> Any:
    async with httpx.AsyncClient(base_url=sim) as client:
        await seed_canary_records(client)
        yield client
        await client.delete("/_control/page-modes")


def canary(tmp_path: Path, base_url: str, *args: str) -> tuple[int, str]:
    env = cli_env(None, PERMITAPI_PORTAL_BASE_URL=base_url, PERMITAPI_SOURCE_MAX_ATTEMPTS="1")
    done = run_cli("sources", "canary", *args, cwd=tmp_path, env=env)
    return done.returncode, done.stdout + done.stderr


async def test_no_drift_against_the_simulator(tmp_path: Path, sim: str, control: Any) -> None:
    code, output = canary(tmp_path, sim)
    assert code == 0, output
    assert "no drift: 3 of 3 records reached" in output
    for slug in ("ladbs", "epicla", "aca:kingco"):
        assert f"ok        {slug} " in output


async def test_script_only_pages_are_read_in_the_browser_without_drift(
    tmp_path: Path, sim: str, control: httpx.AsyncClient
) -> None:
    response = await control.post(
        "/_control/page-modes", json={"source": "aca:kingco", "script_only": True}
    )
    assert response.status_code == 200, response.text
    code, output = canary(tmp_path, sim, "--family", "aca", "--json")
    assert code == 0, output
    report = json.loads(output)
    [record] = report["records"]
    assert record["outcome"] == "ok"
    assert record["needs_browser"] is True
    assert record["present"] == ["raw_status", "status", "permit_type", "address"]


@pytest.mark.parametrize(("slug", "drift", "field"), DRIFTS, ids=[d[1]["kind"] for d in DRIFTS])
async def test_each_drift_mode_exits_1_naming_the_field(
    tmp_path: Path, sim: str, control: httpx.AsyncClient, slug: str, drift: dict[str, str],
    field: str,
) -> None:  # fmt: skip
    response = await control.post("/_control/page-modes", json={"source": slug, "drift": [drift]})
    assert response.status_code == 200, response.text
    code, output = canary(tmp_path, sim)
    assert code == 1, output
    drifted = [line for line in output.splitlines() if line.startswith("drift ")]
    assert len(drifted) == 1, output
    assert f" {slug} " in drifted[0]
    assert f"missing: {field}" in drifted[0]
    assert "drift: 3 of 3 records reached" in output

    code, output = canary(tmp_path, sim, "--json")
    report = json.loads(output)
    assert code == report["exit_code"] == 1
    [record] = [r for r in report["records"] if r["outcome"] == "drift"]
    assert record["missing"] == [field]


def test_nothing_reachable_exits_2(tmp_path: Path) -> None:
    code, output = canary(tmp_path, f"http://127.0.0.1:{free_port()}")
    assert code == 2, output
    assert "nothing reached: 0 of 3 records reached" in output
    assert output.count("unreached ") == 3


def test_an_unknown_family_is_a_usage_error(tmp_path: Path, sim: str) -> None:
    code, output = canary(tmp_path, sim, "--family", "nope")
    assert code == 2
    assert "unknown family 'nope'" in output
