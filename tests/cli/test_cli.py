"""The operator CLI as operators run it: the real command line in a process of its own, sharing
a database with the code under test through PERMITAPI_DATABASE_URL. The commands are forked
from a pre-imported parent (tests/support/cli.py: `run_cli`); the human output of `keys
create` runs `python -m permitapi` and the installed `permitapi` script in new interpreters,
which proves the entry points themselves."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.db import migrate
from permitapi.db.engine import create_engine, create_sessionmaker
from tests.support.cli import (
    cli_env,
    console_script,
    fresh_database,
    permitapi_command,
    run_cli,
    run_fresh_cli,
)

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database(request.param, tmp_path)


async def _query(url: str, statement: str) -> list[tuple[object, ...]]:
    engine = create_engine(url, pool_size=1)
    try:
        async with engine.connect() as connection:
            return [tuple(row) for row in (await connection.execute(text(statement))).all()]
    finally:
        await engine.dispose()


async def _principal(url: str, raw_key: str) -> accounts.Principal | None:
    engine = create_engine(url, pool_size=1)
    try:
        async with create_sessionmaker(engine)() as session:
            return await accounts.resolve_key(session, raw_key)
    finally:
        await engine.dispose()


def principal(url: str, raw_key: str) -> accounts.Principal | None:
    return asyncio.run(_principal(url, raw_key))


def head_revision(url: str) -> str:
    head = ScriptDirectory.from_config(migrate.alembic_config(url)).get_current_head()
    assert head is not None
    return head


def test_db_upgrade_migrates_a_fresh_database(fresh_url: str, tmp_path: Path) -> None:
    result = run_cli("db", "upgrade", cwd=tmp_path, env=cli_env(fresh_url))
    assert result.returncode == 0, result.stderr
    assert "database at head" in result.stdout
    (version,) = asyncio.run(_query(fresh_url, "SELECT version_num FROM alembic_version"))
    assert version[0] == head_revision(fresh_url)
    tables = "SELECT count(*) FROM idempotent_requests"
    assert asyncio.run(_query(fresh_url, tables)) == [(0,)]
    again = run_cli("db", "upgrade", cwd=tmp_path, env=cli_env(fresh_url))
    assert again.returncode == 0, again.stderr
    # Nothing was written next to the command: the database is the one the URL names.
    assert not (tmp_path / "var").exists()


def test_keys_create_json_deactivate_and_set_plan(fresh_url: str, tmp_path: Path) -> None:
    env = cli_env(fresh_url)
    created = run_cli(
        "keys", "create", "--plan", "pro", "--discovery-addon", "--json", cwd=tmp_path, env=env
    )
    assert created.returncode == 0, created.stderr
    lines = created.stdout.splitlines()
    assert len(lines) == 1, created.stdout
    payload = json.loads(lines[0])
    assert set(payload) == {"account_id", "plan", "live_key", "sandbox_key"}
    assert payload["plan"] == "pro"
    assert payload["live_key"].startswith("sk_live_")
    assert payload["sandbox_key"].startswith("sk_test_")

    live = principal(fresh_url, payload["live_key"])
    assert live is not None
    assert (live.account_id, live.plan.name.value, live.discovery_addon) == (
        payload["account_id"],
        "pro",
        True,
    )
    sandbox = principal(fresh_url, payload["sandbox_key"])
    assert sandbox is not None
    assert sandbox.is_sandbox

    moved = run_cli(
        "accounts", "set-plan", payload["account_id"], "developer", cwd=tmp_path, env=env
    )
    assert moved.returncode == 0, moved.stderr
    live = principal(fresh_url, payload["live_key"])
    assert live is not None
    assert live.plan.name.value == "developer"

    gone = run_cli("keys", "deactivate", payload["live_key"], cwd=tmp_path, env=env)
    assert gone.returncode == 0, gone.stderr
    assert principal(fresh_url, payload["live_key"]) is None
    assert principal(fresh_url, payload["sandbox_key"]) is not None  # only that key

    twice = run_cli("keys", "deactivate", payload["live_key"], cwd=tmp_path, env=env)
    assert twice.returncode == 1
    assert "No active key matches" in twice.stderr
    assert twice.stdout == ""


def test_cli_errors(fresh_url: str, tmp_path: Path) -> None:
    env = cli_env(fresh_url)
    assert run_cli("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    missing = run_cli(
        "accounts", "set-plan", "00000000-0000-0000-0000-000000000000", "pro", cwd=tmp_path, env=env
    )
    assert missing.returncode == 1
    assert "No account" in missing.stderr
    bad_plan = run_cli("keys", "create", "--plan", "platinum", "--json", cwd=tmp_path, env=env)
    assert bad_plan.returncode == 2
    assert bad_plan.stdout == ""
    assert "platinum" in bad_plan.stderr


def test_jobs_run_exits_non_zero_when_the_pass_fails(fresh_url: str, tmp_path: Path) -> None:
    env = cli_env(fresh_url, PERMITAPI_LOG_FORMAT="text")
    # Not migrated: the retention pass cannot read its tables and raises.
    failed = run_cli("jobs", "run", "retention", cwd=tmp_path, env=env)
    assert failed.returncode == 1, failed.stdout
    assert "retention: the pass failed" in failed.stderr
    assert "job source retention failed" in failed.stderr  # the logged exception
    assert run_cli("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    done = run_cli("jobs", "run", "retention", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("retention: ")


def test_human_output_of_keys_create_from_the_real_entry_points(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'human.db'}"
    command = permitapi_command("keys", "create", "--plan", "free")
    result = run_fresh_cli(command, cwd=tmp_path, env=cli_env(url))
    assert result.returncode == 0, result.stderr
    assert "sk_live_" in result.stdout
    assert "shown once" in result.stdout
    account_id = result.stdout.split("account_id", 1)[1].split()[0]
    command = [str(console_script()), "accounts", "list", "--json"]
    listed = run_fresh_cli(command, cwd=tmp_path, env=cli_env(url))
    assert listed.returncode == 0, listed.stderr
    assert [(a["account_id"], a["plan"]) for a in json.loads(listed.stdout)] == [
        (account_id, "free")
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({}, "PERMITAPI_SECRET_KEY"),
        # Shorter than 32 bytes: an empty key, a word, and 31 bytes (two of them one character).
        ({"PERMITAPI_SECRET_KEY": ""}, "PERMITAPI_SECRET_KEY must be at least 32 bytes"),
        ({"PERMITAPI_SECRET_KEY": "abc"}, "PERMITAPI_SECRET_KEY must be at least 32 bytes"),
        ({"PERMITAPI_SECRET_KEY": "é" + "x" * 29}, "PERMITAPI_SECRET_KEY must be at least 32"),
        (
            {
                "PERMITAPI_SECRET_KEY": "a-real-secret-for-this-test-of-32-bytes",
                "PERMITAPI_ALLOW_LOOPBACK_WEBHOOKS": "1",
            },
            "PERMITAPI_ALLOW_LOOPBACK_WEBHOOKS",
        ),
    ],
)
def test_serve_refuses_unsafe_settings(tmp_path: Path, extra: dict[str, str], message: str) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"
    result = run_cli("serve", "--port", "1", cwd=tmp_path, env=cli_env(url, **extra), timeout=60)
    assert result.returncode == 2
    assert "refusing to start" in result.stderr
    assert message in result.stderr
    assert not (tmp_path / "serve.db").exists()  # refused before touching the database
