"""deploy/systemd and deploy/container: the units pass `systemd-analyze verify`, and every
command, port and setting the unit, Dockerfile and compose files name is one the CLI and
`Settings` know. (No container runtime here: the image is not built; docs/operations.md says
so.)"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.commands import UsageError, parse_command, setting_variables

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "deploy" / "systemd"
CONTAINER = ROOT / "deploy" / "container"
UNITS = ("permitapi-api.service", "permitapi-worker.service")
SYSTEM_UNITS = Path("/usr/lib/systemd/system")


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    assert found, "systemd-analyze is missing: `python3 tasks.py test` installs Debian's systemd"
    return found


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((SYSTEMD / name).read_text())
    return parser


def verify(root: Path, units: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` of `units` (name: text) installed under a throw-away root that
    has the system's own units and stand-ins for the executables the units start."""
    shutil.copytree(SYSTEM_UNITS, root / "usr/lib/systemd/system", symlinks=True)
    installed = root / "etc/systemd/system"
    installed.mkdir(parents=True)
    for name, text in units.items():
        (installed / name).write_text(text)
        for line in text.splitlines():
            if line.startswith("ExecStart="):
                executable = root / shlex.split(line.removeprefix("ExecStart="))[0].lstrip("/")
                executable.parent.mkdir(parents=True, exist_ok=True)
                executable.write_text("#!/bin/sh\n")
                executable.chmod(0o755)
    return subprocess.run(
        [systemd_analyze(), "verify", f"--root={root}", *(str(installed / n) for n in units)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_systemd_analyze_verifies_both_units(tmp_path: Path) -> None:
    result = verify(tmp_path, {name: (SYSTEMD / name).read_text() for name in UNITS})
    assert result.returncode == 0, result.stderr
    # verify only warns (exit 0) about unknown keys and bad values: none is accepted either.
    assert result.stderr.strip() == "", result.stderr


def test_systemd_analyze_reports_a_broken_unit(tmp_path: Path) -> None:
    text = (SYSTEMD / UNITS[0]).read_text()
    broken = text.replace("Type=exec", "Type=sometimes").replace("ExecStart=", "ExecStrat=")
    result = verify(tmp_path, {"broken.service": broken})
    assert result.returncode != 0
    assert "sometimes" in result.stderr
    assert "ExecStrat" in result.stderr


@pytest.mark.parametrize(
    ("name", "command"), [(UNITS[0], "permitapi serve"), (UNITS[1], "permitapi worker")]
)
def test_each_unit_starts_a_command_the_cli_accepts(name: str, command: str) -> None:
    exec_start = unit(name)["Service"]["ExecStart"]
    program, *args = shlex.split(exec_start)
    assert program.endswith("/permitapi")
    path, params = parse_command(args)
    assert path == command
    if command == "permitapi serve":
        # Several processes, migrations as their own step of an upgrade (docs/operations.md).
        assert params["workers"] > 1
        assert params["migrate_first"] is False
        assert params["host"] == "127.0.0.1"  # behind the reverse proxy


def test_the_environment_file_sets_only_settings() -> None:
    example = SYSTEMD / "permitapi.env.example"
    names = [
        line.split("=", 1)[0]
        for line in example.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert names
    unknown = sorted(set(names) - setting_variables())
    assert not unknown, f"permitapi.env.example sets variables that are not settings: {unknown}"
    for name in UNITS:
        assert unit(name)["Service"]["EnvironmentFile"] == "/etc/permitapi/permitapi.env"


def test_the_cli_parser_refuses_what_the_cli_refuses() -> None:
    """The command checks here and below are not vacuous."""
    for refused in (["serve", "--prot", "8000"], ["wroker"], ["serve", "--workers", "0"]):
        with pytest.raises(UsageError):
            parse_command(refused)


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", (CONTAINER / "Dockerfile").read_text())
    pairs = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, arguments = line.strip().partition(" ")
            pairs.append((instruction.upper(), arguments.strip()))
    return pairs


def test_the_dockerfile_runs_serve_on_the_port_it_exposes_and_copies_what_exists() -> None:
    instructions = dockerfile()
    by_name: dict[str, list[str]] = {}
    for instruction, arguments in instructions:
        by_name.setdefault(instruction, []).append(arguments)
    assert json.loads(by_name["ENTRYPOINT"][-1]) == ["permitapi"]
    path, params = parse_command(json.loads(by_name["CMD"][-1]))
    assert path == "permitapi serve"
    assert params["host"] == "0.0.0.0"  # inside a container
    assert by_name["EXPOSE"] == [str(params["port"])]
    assert params["migrate_first"] is False
    for copy in by_name["COPY"]:
        *sources, _ = copy.split()
        for source in sources:
            assert (ROOT / source).exists(), f"Dockerfile copies {source}, not in the repository"
    healthcheck = " ".join(by_name["HEALTHCHECK"])
    assert f"127.0.0.1:{params['port']}/healthz" in healthcheck
    assert any("constraints.txt" in run for run in by_name["RUN"])  # the pinned versions


def compose() -> dict[str, dict[str, object]]:
    loaded: dict[str, dict[str, object]] = yaml.safe_load((CONTAINER / "compose.yaml").read_text())
    return loaded


def test_the_compose_file_runs_api_worker_migrations_postgres_and_redis() -> None:
    services: dict[str, dict[str, object]] = compose()["services"]  # type: ignore[assignment]
    assert set(services) == {"api", "worker", "migrate", "postgres", "redis"}
    roles = {
        "api": "permitapi serve",
        "worker": "permitapi worker",
        "migrate": "permitapi db upgrade",
    }
    for name, command in roles.items():
        service = services[name]
        path, params = parse_command(list(service["command"]))  # type: ignore[call-overload]
        assert path == command, name
        environment: dict[str, str] = service["environment"]  # type: ignore[assignment]
        unknown = sorted(
            k for k in environment if k.startswith("PERMITAPI_") and k not in setting_variables()
        )
        assert not unknown, (
            f"compose service {name} sets variables that are not settings: {unknown}"
        )
        database_url = environment["PERMITAPI_DATABASE_URL"]
        assert database_url.startswith("postgresql+asyncpg://")
        assert "@postgres:5432/" in database_url
        assert environment["PERMITAPI_REDIS_URL"].startswith("redis://redis:6379/")
        assert "PERMITAPI_SECRET_KEY" in environment
        if name == "api":
            assert params["migrate_first"] is False
            published = [str(port).split(":") for port in service["ports"]]  # type: ignore[attr-defined]
            assert [container for _, container in published] == [str(params["port"])]
            # After the one-shot migration, like the worker.
            assert services[name]["depends_on"]["migrate"]["condition"] == (  # type: ignore[index]
                "service_completed_successfully"
            )
    build = services["migrate"]["build"]
    assert (CONTAINER / build["context"] / build["dockerfile"]).resolve() == (  # type: ignore[index]
        CONTAINER / "Dockerfile"
    )
