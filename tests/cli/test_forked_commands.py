"""The forked commands the CLI tests rely on (`run_cli`, tests/support/prewarmed.py) answer as a
new interpreter does: same exit code, stdout and stderr apart, exactly the environment given,
the working directory given, and a command that does not end is killed and fails its test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import cli_env, permitapi_command, run_cli, run_fresh_cli
from tests.support.dev_server import free_port

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("keys", "list", "--json"),  # exit 1: the database was never migrated, on stderr
        ("db", "current"),  # exit 1, with a line on stdout and advice on stderr
        ("keys", "create", "--plan", "nonsense"),  # a usage error: exit 2
    ],
)
def test_a_forked_command_answers_as_a_new_interpreter(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    env = cli_env(f"sqlite+aiosqlite:///{tmp_path / 'never-migrated.db'}")
    forked = run_cli(*args, cwd=tmp_path, env=env)
    fresh = run_fresh_cli(permitapi_command(*args), cwd=tmp_path, env=env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )
    if args != ("--help",):
        assert forked.returncode != 0
        assert forked.stderr


def test_the_environment_and_directory_are_exactly_the_ones_given(tmp_path: Path) -> None:
    # Without PERMITAPI_DATABASE_URL the CLI uses the embedded default under ./var of its
    # working directory: a variable leaking from the test process or the parent, or the
    # parent's directory, would send these keys elsewhere.
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
        env = cli_env(None)
        assert run_cli("db", "upgrade", cwd=directory, env=env).returncode == 0
    made = run_cli("keys", "create", "--plan", "free", "--json", cwd=first, env=cli_env(None))
    assert made.returncode == 0, made.stderr
    listed = {
        directory.name: json.loads(
            run_cli("keys", "list", "--json", cwd=directory, env=cli_env(None)).stdout
        )
        for directory in (first, second)
    }
    assert len(listed["first"]) == 2
    assert listed["second"] == []
    pointed = cli_env(f"sqlite+aiosqlite:///{first / 'var' / 'permitapi.db'}")
    across = run_cli("keys", "list", "--json", cwd=second, env=pointed)
    assert json.loads(across.stdout) == listed["first"]


def test_a_command_that_does_not_end_is_killed_and_fails_the_test(tmp_path: Path) -> None:
    port = str(free_port())
    with pytest.raises(AssertionError, match="did not exit within 2 s and was killed"):
        run_cli("portal-sim", "--port", port, cwd=tmp_path, env=cli_env(None), timeout=2)
