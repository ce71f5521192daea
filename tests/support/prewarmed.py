"""`permitapi` commands in processes forked from one pre-imported parent, so that a test can
start, SIGKILL and restart workers many times without paying the ~3 s import of each start
(on a loaded two-core machine that import, not the work, would dominate the run, and a kill
would as often land in it as in the work).

Each child is a process of its own (its own pid, database connections and event loop) that
runs the real command line (`permitapi.cli.app(args)`) with the environment and working
directory given to `spawn`, its output in a log file. The parent (`_SERVER`) forks on request
and reports each child's pid and exit code; it never opens a connection or an event loop.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.cli import cli_env

_SERVER = r"""
import json, os, selectors, signal, sys, traceback

import permitapi.cli as cli
# What the commands import when they run.
import permitapi.app, permitapi.composition, permitapi.worker.runner  # noqa

def report(message):
    os.write(1, (json.dumps(message) + "\n").encode())

def child(request):
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        try:
            cli.app(args=request["args"], prog_name="permitapi")
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        except BaseException:
            traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

selector = selectors.DefaultSelector()
selector.register(0, selectors.EVENT_READ)
pending = b""
report({"ready": os.getpid()})
while True:
    for _ in selector.select(timeout=0.05):
        chunk = os.read(0, 65536)
        if not chunk:
            sys.exit(0)
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                child(request)
            report({"spawned": request["id"], "pid": pid})
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        report({"exited": pid, "code": os.waitstatus_to_exitcode(status)})
"""

STARTUP_SECONDS = 60


class Prewarmed:
    """The forking parent; `spawn` starts a command, `close` ends every child and the parent."""

    def __init__(self, workdir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            cwd=workdir,
            env=cli_env(None),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._changed = threading.Condition()
        self._pids: dict[int, int] = {}
        self.exits: dict[int, int] = {}
        self.children: list[Child] = []
        self._ready = False
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self._wait(lambda: self._ready, STARTUP_SECONDS, "the forking parent did not start")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message: dict[str, Any] = json.loads(line)
            with self._changed:
                if "ready" in message:
                    self._ready = True
                elif "spawned" in message:
                    self._pids[message["spawned"]] = message["pid"]
                else:
                    self.exits[message["exited"]] = message["code"]
                self._changed.notify_all()

    def _wait(self, done: Any, timeout: float, failure: str) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done():
                remaining = deadline - time.monotonic()
                assert remaining > 0, failure
                assert self.process.poll() is None, failure
                self._changed.wait(min(remaining, 0.5))

    def spawn(self, name: str, *args: str, cwd: Path, env: dict[str, str]) -> Child:
        """`permitapi *args` in a new child, output in `<cwd>/<name>-<n>.log`."""
        index = 0
        while (log := cwd / f"{name}-{index}.log").exists():
            index += 1
        log.touch()
        request_id = self._next_id
        self._next_id += 1
        request = {"id": request_id, "args": list(args), "cwd": str(cwd), "env": env}
        request["log"] = str(log)
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        self._wait(lambda: request_id in self._pids, 10, f"{name} was not started")
        child = Child(self, name, self._pids[request_id], log)
        self.children.append(child)
        return child

    def wait_exit(self, pid: int, timeout: float) -> bool:
        try:
            self._wait(lambda: pid in self.exits, timeout, "")
        except AssertionError:
            return False
        return True

    def close(self) -> None:
        for child in self.children:
            if child.running():
                child.sigkill()
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


@dataclass
class Child:
    parent: Prewarmed
    name: str
    pid: int
    log: Path
    started: float = field(default_factory=time.monotonic)

    @property
    def returncode(self) -> int | None:
        """The exit code once the child ended (negative: killed by that signal)."""
        return self.parent.exits.get(self.pid)

    def running(self) -> bool:
        return self.pid not in self.parent.exits

    def _signal(self, number: int) -> None:
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def sigkill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or released."""
        self._signal(signal.SIGKILL)
        assert self.parent.wait_exit(self.pid, 15), f"{self.name} {self.pid} survived SIGKILL"

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM (the worker's graceful stop), SIGKILL after `timeout`; the exit code."""
        self._signal(signal.SIGTERM)
        if not self.parent.wait_exit(self.pid, timeout):
            self.sigkill()
        return self.returncode

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- {self.name} (pid {self.pid}) ---\n" + "\n".join(text.splitlines()[-lines:])
