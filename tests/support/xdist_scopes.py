"""How the test command shares its four workers (pytest-xdist, `--dist loadscope`).

`loadscope` sends each module's tests to one worker. Two things are changed:

- **One shared dev server per backend and folder.** The acceptance and MCP folders each share
  a real `permitapi dev` server per backend (their session fixture `server`). Split by
  module, every worker that ran one of those modules started its own, and restarted it each
  time it switched from a module's SQLite tests to its PostgreSQL tests: about thirty server
  starts (each an API process, a simulator and their imports) where one process makes four.
  The tests that use such a server are put in one unit per (folder, backend), so each server
  starts once per run. Inside a unit the tests keep the order one process gives them.
- **The units that start processes go first.** Dev servers, CLI commands, bench scripts and
  generated clients are the long units; sent last, one of them finishes alone while the
  other workers are idle.

Which tests use a shared server is known where they are collected, in the workers; the
scheduler runs in the controller, which sees node ids only. Each worker writes the units it
found to a file of a directory the controller names (`workerinput`), and the scheduler reads
them once every worker has collected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

# The `workerinput` key naming the directory of the workers' unit files.
SHARED_UNITS = "permitapi_shared_server_units"
SHARED_FIXTURE = "server"
# Folders whose tests start servers or commands: their units are sent first.
PROCESS_FOLDERS = (
    "tests/acceptance/",
    "tests/mcp/",
    "tests/bench/",
    "tests/clients/",
    "tests/cli/",
)


def shared_server_units(items: list[pytest.Item]) -> dict[str, str]:
    """In a worker: the unit of each test using a shared, backend-parametrised session
    `server`: `<folder of the fixture>/*::server[<backend>]` (the folder's every module)."""
    units = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or SHARED_FIXTURE not in callspec.params:
            continue
        info: Any = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.get(SHARED_FIXTURE, ()) if info else ()
        if not definitions or definitions[-1].scope != "session":
            continue
        folder = definitions[-1].baseid or "."
        backend = callspec.params[SHARED_FIXTURE]
        units[item.nodeid] = f"{folder}/*::{SHARED_FIXTURE}[{backend}]"
    return units


def write_units(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker run by this scheduler: write its units where the controller reads them."""
    workerinput: dict[str, Any] = getattr(config, "workerinput", {})
    if SHARED_UNITS in workerinput:
        found = shared_server_units(items)
        path = Path(workerinput[SHARED_UNITS]) / f"{workerinput['workerid']}.json"
        path.write_text(json.dumps(found))


class SharedServerScheduling(LoadScopeScheduling):
    """`loadscope` with the shared-server units above, and process-starting units first."""

    def __init__(self, config: pytest.Config, log: Any, units_dir: Path) -> None:
        super().__init__(config, log)
        self._units_dir = units_dir
        self._units: dict[str, str] | None = None
        self._ordered = False

    def _split_scope(self, nodeid: str) -> str:
        if self._units is None:
            # Called first when every worker has collected (and written its file).
            self._units = {}
            for written in sorted(self._units_dir.glob("*.json")):
                self._units.update(json.loads(written.read_text()))
        return self._units.get(nodeid) or str(super()._split_scope(nodeid))

    def _assign_work_unit(self, node: Any) -> None:
        if not self._ordered:
            self._ordered = True
            for scope in sorted(self.workqueue, key=self._weight, reverse=True):
                self.workqueue.move_to_end(scope)
        super()._assign_work_unit(node)

    def _weight(self, scope: str) -> tuple[bool, int]:
        return scope.startswith(PROCESS_FOLDERS), len(self.workqueue[scope])
