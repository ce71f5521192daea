"""The operator commands added for running the service: `keys list`, `accounts list`,
`db current`, help for every option, the dev-state file, and `serve`'s warning about several
processes on SQLite (with uvicorn's own lines as an operator reads them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from permitapi import cli, dev_state
from tests.support.cli import cli_env, fresh_database, run_cli
from tests.support.dev_server import free_port
from tests.support.long_running import running

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database(request.param, tmp_path)


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from commands(sub, (*path, name))


def test_every_option_and_argument_has_help_and_flags_show_no_type() -> None:
    runner = CliRunner()
    seen = 0
    for path, command in commands(typer.main.get_command(cli.app)):
        for param in command.params:
            assert (param.help or "").strip(), (
                f"permitapi {' '.join(path)}: {param.name} has no help"
            )
        shown = runner.invoke(cli.app, [*path, "--help"], env={"COLUMNS": "120"})
        assert shown.exit_code == 0, shown.output
        assert "<bool>" not in shown.output, shown.output
        seen += 1
    assert seen >= 13
    serve = runner.invoke(cli.app, ["serve", "--help"], env={"COLUMNS": "120"}).output
    for option in ("--host", "--port", "--workers", "--migrate / --no-migrate"):
        assert option in serve


def test_db_current_keys_list_and_accounts_list(fresh_url: str, tmp_path: Path) -> None:
    env = cli_env(fresh_url)
    never = run_cli("db", "current", cwd=tmp_path, env=env)
    assert never.returncode == 1, never.stderr
    assert "database at no revision; head is " in never.stdout
    assert "permitapi db upgrade" in never.stderr
    if fresh_url.startswith("sqlite"):
        assert not list(tmp_path.glob("*.db"))  # asked about, not created
    assert run_cli("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    current = run_cli("db", "current", cwd=tmp_path, env=env)
    assert current.returncode == 0, current.stderr
    assert current.stdout.strip().endswith("(head)")

    empty = run_cli("keys", "list", "--json", cwd=tmp_path, env=env)
    assert json.loads(empty.stdout) == []
    made = [
        json.loads(
            run_cli("keys", "create", "--plan", plan, "--json", cwd=tmp_path, env=env).stdout
        )
        for plan in ("free", "pro")
    ]
    assert run_cli("keys", "deactivate", made[0]["live_key"], cwd=tmp_path, env=env).returncode == 0

    listed = run_cli("keys", "list", "--json", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    keys = json.loads(listed.stdout)
    assert len(keys) == 4
    for created in made:
        assert created["live_key"] not in listed.stdout
        assert created["sandbox_key"] not in listed.stdout
    first = [k for k in keys if k["account_id"] == made[0]["account_id"]]
    assert {(k["kind"], k["state"], k["plan"]) for k in first} == {
        ("live", "deactivated", "free"),
        ("sandbox", "active", "free"),
    }
    for key in keys:
        raw = next(c[f"{key['kind']}_key"] for c in made if c["account_id"] == key["account_id"])
        assert raw.startswith(key["prefix"])
        assert len(key["prefix"]) < len(raw)
    only = json.loads(
        run_cli(
            "keys", "list", "--account", made[1]["account_id"], "--json", cwd=tmp_path, env=env
        ).stdout
    )
    assert {k["account_id"] for k in only} == {made[1]["account_id"]}

    table = run_cli("keys", "list", cwd=tmp_path, env=env)
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["key_id", "account_id", "plan", "kind", "state", "prefix"]
    assert len(lines) == 5

    accounts = json.loads(run_cli("accounts", "list", "--json", cwd=tmp_path, env=env).stdout)
    assert {(a["account_id"], a["plan"], a["active_keys"]) for a in accounts} == {
        (made[0]["account_id"], "free", 1),
        (made[1]["account_id"], "pro", 2),
    }
    human = run_cli("accounts", "list", cwd=tmp_path, env=env).stdout.splitlines()
    assert human[0].split() == ["account_id", "plan", "discovery_addon", "overage", "active_keys"]
    assert len(human) == 3


def test_dev_state_is_used_only_while_its_server_runs_and_the_environment_wins(
    tmp_path: Path,
) -> None:
    state_file = tmp_path / "var" / "dev-server.json"
    assert dev_state.choose({}, state_file).overrides == {}  # no file
    alive = dev_state.DevState(
        "sqlite+aiosqlite:///x.db", "http://127.0.0.1:1/_sim", "b", os.getpid()
    )
    dev_state.record(alive, state_file)
    assert oct(state_file.stat().st_mode & 0o777) == "0o600"
    chosen = dev_state.choose({}, state_file)
    assert chosen.overrides == {
        "database_url": "sqlite+aiosqlite:///x.db",
        "portal_base_url": "http://127.0.0.1:1/_sim",
    }
    assert "dev server" in chosen.portals_origin
    mine = dev_state.choose({"PERMITAPI_DATABASE_URL": "postgresql+asyncpg://h/db"}, state_file)
    assert mine.overrides == {"portal_base_url": "http://127.0.0.1:1/_sim"}
    assert mine.database_origin == "PERMITAPI_DATABASE_URL"
    # Another process's file is not this process's to remove.
    dev_state.clear(state_file, pid=os.getpid() + 1)
    assert state_file.exists()
    dev_state.clear(state_file)
    assert not state_file.exists()
    # A file left by a dev server that is gone is ignored.
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = dev_state.DevState(
        "sqlite+aiosqlite:///x.db", "http://x/_sim", "b", int(finished.stdout)
    )
    dev_state.record(dead, state_file)
    stale = dev_state.choose({}, state_file)
    assert stale.overrides == {}
    assert stale.portals_origin == "default"
    state_file.write_text("{not json")
    assert dev_state.choose({}, state_file).overrides == {}


def test_serve_warns_about_several_processes_on_sqlite_in_clean_json(tmp_path: Path) -> None:
    port = free_port()
    env = cli_env(
        f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}",
        PERMITAPI_SECRET_KEY="a-real-secret-for-this-test-of-serve-warnings",
    )
    with running(
        ["serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
        cwd=tmp_path,
        env=env,
        ready_url=f"http://127.0.0.1:{port}/healthz",
    ) as started:
        pass
    output = started.text()
    assert "\x1b" not in output, output
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert len(lines) == len([line for line in output.splitlines() if line.strip()]), output
    warnings = [e for e in lines if e["level"] == "warning" and "SQLite" in str(e["message"])]
    assert len(warnings) == 1, output
    assert str(warnings[0]["message"]).startswith("2 API processes on SQLite")
    assert all("color_message" not in e for e in lines)
    assert any("Started parent process" in str(e["message"]) for e in lines), output


def test_serve_on_one_process_or_postgresql_does_not_warn(tmp_path: Path) -> None:
    port = free_port()
    env = cli_env(
        f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}",
        PERMITAPI_SECRET_KEY="a-real-secret-for-this-test-of-serve-warnings",
    )
    with running(
        ["serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        ready_url=f"http://127.0.0.1:{port}/healthz",
    ) as started:
        pass
    assert "on SQLite" not in started.text()
