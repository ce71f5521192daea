#!/usr/bin/env python3
"""The two entry points of the README, needing only Python 3.11 on the machine:

    python3 tasks.py dev     run the service offline on its embedded defaults
    python3 tasks.py test    run the whole suite: ruff, mypy (strict on src/), pytest on
                             SQLite and PostgreSQL in four parallel workers
    python3 tasks.py clients regenerate the Python and TypeScript clients under clients/
                             from the app's OpenAPI document (tools/clients)

All create `.venv` and install the pinned dependencies (constraints.txt) when needed;
`clients` also installs the generators' own pinned toolchains under .cache/clients/.
`test` makes sure PostgreSQL and Redis are up (starting them with `pg_ctlcluster` and
`redis-server` when they are down) and fails if PostgreSQL cannot be reached. It installs the
Debian packages its checks drive when missing: chromium (the playground's browser test),
prometheus (`promtool`) and systemd (`systemd-analyze`) for the deployment files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".permitapi-installed"
PG_ADDRESS = ("127.0.0.1", 5432)
REDIS_ADDRESS = ("127.0.0.1", 6379)


def _inputs_digest() -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_venv() -> None:
    wanted = _inputs_digest()
    if STAMP.exists() and STAMP.read_text() == wanted and (BIN / "permitapi").exists():
        return
    if not (BIN / "python").exists():
        print("creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("installing pinned dependencies into .venv", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "install", "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[dev,browser]"],
        check=True,
    )
    STAMP.write_text(wanted)


def _reachable(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=1.0):
            return True
    except OSError:
        return False


def _start(command: str) -> int:
    print(f"starting: {command}", flush=True)
    return subprocess.run(command, shell=True, check=False).returncode  # noqa: S602 - fixed commands


def _apt_install(packages: list[str]) -> None:
    """Install Debian packages, waiting for another apt-get's lock; on a machine whose package
    lists are missing or stale the first try fails, so refresh them once and try again."""
    if not shutil.which("apt-get"):
        return
    apt = ("" if os.geteuid() == 0 else "sudo ") + "apt-get -o DPkg::Lock::Timeout=600"
    install = f"{apt} install -y -q {' '.join(packages)}"
    if _start(install) != 0:
        _start(f"{apt} update -q")
        _start(install)


def _wait_for(address: tuple[str, int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _reachable(address):
            return True
        time.sleep(0.5)
    return False


def ensure_services() -> None:
    if not _reachable(PG_ADDRESS) and shutil.which("pg_ctlcluster"):
        versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
        if versions:
            _start(f"pg_ctlcluster --skip-systemctl-redirect {versions[-1]} main start")
    if not _reachable(REDIS_ADDRESS) and shutil.which("redis-server"):
        Path("/var/log/redis").mkdir(parents=True, exist_ok=True)
        Path("/var/lib/redis").mkdir(parents=True, exist_ok=True)
        _start(
            "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save '' "
            "--appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log"
        )
    if not _wait_for(PG_ADDRESS, 30):
        sys.exit("PostgreSQL is not reachable at 127.0.0.1:5432; the suite needs it")
    if not _wait_for(REDIS_ADDRESS, 15):
        sys.exit("Redis is not reachable at 127.0.0.1:6379; the suite needs it")


CHROMIUM = Path("/usr/bin/chromium")


def ensure_chromium() -> None:
    """The playground's browser test and the browser-backed fetching tests drive Debian's
    Chromium through the `browser` extra's Playwright (Playwright's own browser download cannot
    work offline): install the package when it is missing."""
    if CHROMIUM.exists():
        return
    _apt_install(["chromium"])
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing and could not be installed (apt-get install chromium)")


# The deployment files' own checkers (tests/deploy): Debian package of each command.
CHECKING_TOOLS = {"promtool": "prometheus", "systemd-analyze": "systemd"}


def ensure_checking_tools() -> None:
    """`promtool check rules` and `systemd-analyze verify` check deploy/ in the suite: install
    their Debian packages when a command is missing (waiting for another apt-get's lock)."""
    missing = sorted(
        {package for tool, package in CHECKING_TOOLS.items() if not shutil.which(tool)}
    )
    if missing:
        _apt_install(missing)
    still = sorted(tool for tool in CHECKING_TOOLS if not shutil.which(tool))
    if still:
        packages = " ".join(CHECKING_TOOLS[tool] for tool in still)
        sys.exit(
            f"{', '.join(still)} missing and could not be installed (apt-get install {packages})"
        )


def run(*args: str) -> None:
    print("+ " + " ".join(args), flush=True)
    result = subprocess.run(args, cwd=ROOT, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)


def test(pytest_args: list[str]) -> None:
    ensure_venv()
    ensure_services()
    ensure_chromium()
    ensure_checking_tools()
    code = [p for p in ("src", "tests", "bench", "tools", "tasks.py") if (ROOT / p).exists()]
    run(str(BIN / "ruff"), "check", *code)
    run(str(BIN / "ruff"), "format", "--check", *code)
    run(str(BIN / "mypy"))
    run(str(BIN / "lint-imports"))
    run(str(BIN / "python"), "-m", "pytest", *_parallel(pytest_args), *pytest_args)


# docs/decisions.md "Parallel test workers": the suite mostly waits (subprocesses starting,
# servers answering, PostgreSQL), so four workers keep two cores busy. `loadscope` sends a
# module's tests to one worker, so each module-scoped dev server or simulator still starts once.
TEST_WORKERS = "4"


def _parallel(pytest_args: list[str]) -> list[str]:
    """`-n 4 --dist loadscope` unless the caller chose the workers (`-n`, `--dist`,
    `-p no:xdist`) or debugs (`--pdb`, `-s`), which a pool of workers cannot serve."""
    own = ("-n", "--numprocesses", "--dist", "--pdb", "-s", "no:xdist")
    if any(arg.startswith(own) or arg == "-pno:xdist" for arg in pytest_args):
        return []
    workers = os.environ.get("PERMITAPI_TEST_WORKERS", TEST_WORKERS)
    return ["-n", workers, "--dist", "loadscope"]


def dev(args: list[str]) -> None:
    ensure_venv()
    os.chdir(ROOT)
    os.execv(str(BIN / "permitapi"), [str(BIN / "permitapi"), "dev", *args])  # noqa: S606


def clients(args: list[str]) -> None:
    ensure_venv()
    run(str(BIN / "python"), "-m", "tools.clients", *args)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("dev", "test", "clients"):
        sys.exit(__doc__)
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "dev":
        dev(rest)
    elif command == "clients":
        clients(rest)
    else:
        test(rest)


if __name__ == "__main__":
    main()
