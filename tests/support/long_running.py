"""Long-running `permitapi` subprocesses (dev and production servers, workers, the portal
simulator): started in a working directory, their output kept for failure messages, stopped
at the end of the block."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.cli import permitapi_command

STARTUP_SECONDS = 60


@dataclass
class Running:
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.output)


@contextmanager
def running(
    args: list[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    ready_url: str | None = None,
    graceful: bool = True,
) -> Iterator[Running]:
    """`permitapi *args` until the block ends; with `ready_url`, waits for it to answer 200.
    Stopped with SIGTERM (SIGKILL after 15 s), or at once with SIGKILL when not `graceful`."""
    process = subprocess.Popen(
        permitapi_command(*args),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = Running(process)
    reader = threading.Thread(
        target=lambda: started.output.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        if ready_url is not None:
            wait_ready(started, ready_url)
        yield started
    finally:
        if graceful:
            process.terminate()
        else:
            process.kill()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_ready(started: Running, url: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        assert started.process.poll() is None, f"{url} exited:\n{started.text()}"
        assert time.monotonic() < deadline, f"{url} did not start:\n{started.text()}"
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
