"""Where a running `permitapi dev` keeps its state, for the commands run beside it.

`permitapi dev` writes ./var/dev-server.json (its database URL, its portal simulator's URL,
its process id) when it starts and removes it when it stops. The operator commands run in the
same directory (`permitapi jobs run`, `keys`, `accounts`, `db`) read it, so that a job run now
reads the simulator the dev server reads instead of the real portals, without settings passed
by hand. A setting in the environment always wins; a file left by a dev server that is no
longer running is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

STATE_FILE: Final = Path("var") / "dev-server.json"


@dataclass(frozen=True)
class DevState:
    database_url: str
    portal_base_url: str
    base_url: str
    pid: int


def record(state: DevState, path: Path = STATE_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(state), indent=2) + "\n")
    # The database URL may hold a PostgreSQL password.
    path.chmod(0o600)


def clear(path: Path = STATE_FILE, pid: int | None = None) -> None:
    """Remove the file if it is this process's (another dev server may have replaced it)."""
    state = _load(path)
    if state is not None and state.pid == (os.getpid() if pid is None else pid):
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _load(path: Path) -> DevState | None:
    try:
        raw = json.loads(path.read_text())
        return DevState(
            database_url=str(raw["database_url"]),
            portal_base_url=str(raw["portal_base_url"]),
            base_url=str(raw["base_url"]),
            pid=int(raw["pid"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def running(path: Path = STATE_FILE) -> DevState | None:
    """The state of the dev server running in this directory, if one is."""
    state = _load(path)
    if state is None or not _alive(state.pid):
        return None
    return state


@dataclass(frozen=True)
class Chosen:
    """Setting overrides taken from a running dev server, and where each setting came from."""

    overrides: dict[str, str]
    database_origin: str
    portals_origin: str


def choose(environ: Mapping[str, str], path: Path = STATE_FILE) -> Chosen:
    names = {name.upper() for name in environ}
    state = running(path)
    overrides: dict[str, str] = {}
    origins: dict[str, str] = {}
    for field, variable in (
        ("database_url", "PERMITAPI_DATABASE_URL"),
        ("portal_base_url", "PERMITAPI_PORTAL_BASE_URL"),
    ):
        if variable in names:
            origins[field] = variable
        elif state is not None:
            overrides[field] = getattr(state, field)
            origins[field] = f"the dev server's, {path}"
        else:
            origins[field] = "default"
    return Chosen(overrides, origins["database_url"], origins["portal_base_url"])
