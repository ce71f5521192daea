"""`permitapi jobs run NAME` beside a running `permitapi dev`, with no settings passed: it finds
the dev server's database and portal simulator through ./var/dev-server.json, says so, shows
progress (periodic counts on a pipe, a bar on a terminal) and a summary."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.cli import permitapi_command, run_cli
from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow
SIM = "/_sim/_control"
COUNTY = {"county": "Los Angeles County"}


def saved_searches(http: httpx.Client, server: DevServer, count: int) -> tuple[str, list[str]]:
    created = server.cli("keys", "create", "--plan", "pro", "--discovery-addon", "--json")
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["live_key"]
    ids = []
    for number in range(count):
        made = http.post(
            "/api/v1/saved-searches",
            json={"name": f"Beside dev {number}", "criteria": COUNTY},
            headers={"X-API-Key": key},
        )
        assert made.status_code == 201, made.text
        ids.append(made.json()["saved_search_id"])
    return key, ids


def test_jobs_run_beside_dev_uses_its_simulator_with_no_settings(
    http: httpx.Client, server: DevServer
) -> None:
    state = json.loads((server.workdir / "var" / "dev-server.json").read_text())
    assert state["portal_base_url"] == f"{server.base_url}/_sim"
    assert "PERMITAPI_PORTAL_BASE_URL" not in server.env
    key, ids = saved_searches(http, server, 3)
    requests_before = http.get(f"{SIM}/stats").json()["requests"].get("epicla", 0)

    done = run_cli(
        "jobs", "run", "saved-searches", "--progress-every", "0", cwd=server.workdir, env=server.env
    )
    assert done.returncode == 0, done.stderr
    assert f"portals: {server.base_url}/_sim (the dev server's, var/dev-server.json)" in (
        done.stderr
    )
    database_origin = "PERMITAPI_DATABASE_URL" if not server.sqlite else "the dev server's"
    assert re.search(rf"^database: \S+ \({re.escape(database_origin)}", done.stderr, re.M)

    # Periodic counts (every evaluation, with --progress-every 0), then the summary.
    counts = re.findall(r"^saved-searches: (\d+)/(\d+) done$", done.stderr, re.M)
    assert counts, done.stderr
    total = int(counts[-1][1])
    assert total >= 3
    assert [int(done_) for done_, _ in counts] == list(range(0, total + 1))[-len(counts) :]
    assert counts[-1] == (str(total), str(total))
    summary = re.fullmatch(r"saved-searches: (\d+) handled in \d+\.\d s\n", done.stdout)
    assert summary is not None, done.stdout
    assert int(summary.group(1)) == total

    # Every search was evaluated against the simulator (the real portals are unreachable here:
    # a pass against them records "temporarily unavailable").
    for saved_search_id in ids:
        state = http.get(
            f"/api/v1/saved-searches/{saved_search_id}", headers={"X-API-Key": key}
        ).json()
        assert state["evaluation"]["last_error"] is None, state
        assert state["evaluation"]["baseline_size"] > 0, state
    requests_after = http.get(f"{SIM}/stats").json()["requests"].get("epicla", 0)
    assert requests_after > requests_before


def test_jobs_run_on_a_terminal_draws_a_bar(http: httpx.Client, server: DevServer) -> None:
    saved_searches(http, server, 2)
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            permitapi_command("jobs", "run", "saved-searches"),
            cwd=server.workdir,
            env=server.env,
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
        )
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            drawn += chunk
        stdout, _ = process.communicate(timeout=120)
    finally:
        os.close(controller)
    assert process.returncode == 0, drawn.decode(errors="replace")
    screen = drawn.decode(errors="replace")
    bars = re.findall(r"\rsaved-searches \[([#.]{30})\] (\d+)/(\d+)", screen)
    assert bars, screen
    assert bars[-1][0] == "#" * 30
    assert bars[-1][1] == bars[-1][2]
    assert not re.search(r"^saved-searches: \d+/\d+ done", screen, re.M)  # no count lines
    assert stdout.startswith("saved-searches: ")
    assert " handled in " in stdout


def test_the_state_file_names_this_server(server: DevServer) -> None:
    state = json.loads((Path(server.workdir) / "var" / "dev-server.json").read_text())
    assert state["base_url"] == server.base_url
    assert state["pid"] > 0
    if not server.sqlite:
        assert state["database_url"] == server.env["PERMITAPI_DATABASE_URL"]
