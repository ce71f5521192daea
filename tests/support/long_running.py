"""Long-running `permitapi` commands (dev and production servers, workers, the portal
simulator): started in a working directory, their output kept for failure messages, stopped
at the end of the block.

They are forked from the test process's pre-imported parent (tests/support/prewarmed.py, as
`run_cli` does), so a server starts without paying the ~3 s import of the app, and their
output (stdout and stderr together, as an operator's terminal shows them) goes to a log file
beside the parent's. Each is a process of its own with its own pid, signals and database
connections; `serve --workers N` still starts its N uvicorn workers as new interpreters.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.cli import forking_parent
from tests.support.prewarmed import Child

STARTUP_SECONDS = 60


@dataclass
class Running:
    child: Child

    @property
    def pid(self) -> int:
        return self.child.pid

    @property
    def returncode(self) -> int | None:
        return self.child.returncode

    def text(self) -> str:
        return self.child.log.read_text(errors="replace")


@contextmanager
def running(
    args: list[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    ready_url: str | None = None,
    graceful: bool = True,
) -> Iterator[Running]:
    """`permitapi *args` until the block ends (in the test's own directory when `cwd` is None);
    with `ready_url`, waits for it to answer 200. Stopped with SIGTERM (SIGKILL after 15 s),
    or at once with SIGKILL when not `graceful`."""
    parent = forking_parent()
    fd, log = tempfile.mkstemp(prefix=f"{args[0]}-", suffix=".log", dir=parent.workdir)
    os.close(fd)
    child = parent.start(args[0], *args, cwd=cwd or Path.cwd(), env=env, log=Path(log))
    started = Running(child)
    try:
        if ready_url is not None:
            wait_ready(started, ready_url)
        yield started
    finally:
        if graceful:
            child.stop(timeout=15)
        else:
            child.sigkill()


def wait_ready(started: Running, url: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        assert started.returncode is None, f"{url} exited:\n{started.text()}"
        assert time.monotonic() < deadline, f"{url} did not start:\n{started.text()}"
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
