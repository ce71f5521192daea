"""`permitapi` commands in processes forked from one pre-imported parent, so that a test pays
the ~1.5 s import of the CLI (~3 s with the app, composition and worker runner) once per
parent instead of once per command. On a loaded two-core machine that import, not the work,
dominated the CLI tests; and a test that SIGKILLs and restarts workers needs kills to land in
the work, not in start-ups.

Each child is a process of its own (its own pid, database connections and event loop) that
runs the real entry point (`permitapi/__main__.py` through runpy, as `python -m permitapi`)
with exactly the environment, working directory and arguments given, stdin on /dev/null and
stdout and stderr in files (one shared file for a long-running child's log). It ends as an
interpreter does: atexit handlers run, an uncaught exception goes to `sys.excepthook` and
exits 1, `SystemExit` gives the exit code.

What a child could inherit that a fresh `python -m permitapi` would not have, and why it does
not matter:

- The parent has imported the CLI, the app, composition and the worker runner (what the
  commands import when they run). Imports have no side effect that depends on settings: the
  parent checks before it reports ready that it has read no settings (`get_settings`'s cache
  is empty), opened no file descriptor but its stdio (no connection, no event loop's
  self-pipe), started no thread, configured no logging handler and left the collector as a
  fresh interpreter has it (`check_fresh` in `_SERVER`); a failed check fails the test that asked
  for the parent.
- Interpreter start-up state: the hash seed is the parent's (shared by every child; a fresh
  interpreter draws one), `sys.path` and the locale come from the parent's environment
  (`cli_env(None)`: the same PYTHONPATH and locale as any `cli_env`), and `random` is
  reseeded in each child by CPython's own at-fork hook. TZ is re-read from the given
  environment. stdout and stderr are unbuffered, as `cli_env` asks of every command
  (PYTHONUNBUFFERED=1), whatever the given environment says. The imported objects are
  frozen (`gc.freeze`, as CPython advises before forking workers): a child's collector skips
  them, which only spares it copying the shared pages.

The parent (`_SERVER`) forks on request and reports each child's pid and exit code (woken by
SIGCHLD, which each child sets back to the default).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import locale
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SERVER = r"""
import gc, json, logging, os, runpy, selectors, signal, sys, threading, time

import permitapi.cli
# What the commands import when they run.
import permitapi.app, permitapi.composition, permitapi.worker.runner  # noqa
import permitapi.config

def report(message):
    os.write(1, (json.dumps(message) + "\n").encode())

def check_fresh():
    problems = []
    if permitapi.config.get_settings.cache_info().currsize:
        problems.append("settings were read")
    extra = sorted(set(os.listdir("/proc/self/fd")) - {"0", "1", "2"})
    # listdir's own descriptor is among them.
    if len(extra) > 1:
        problems.append(f"descriptors beside stdio: {extra}")
    if threading.active_count() != 1:
        problems.append(f"threads: {threading.enumerate()}")
    if logging.getLogger().handlers:
        problems.append(f"root logging handlers: {logging.getLogger().handlers}")
    if not gc.isenabled() or gc.get_freeze_count() or gc.get_threshold() != (700, 10, 10):
        problems.append("the garbage collector was tuned")
    return problems

def child(request, wakeup):
    # A fresh interpreter's dispositions (the parent's SIGCHLD handler is its own).
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    selector.close()
    for fd in wakeup:
        os.close(fd)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    out = os.open(request["stdout"], flags, 0o644)
    err = out
    if request["stderr"] != request["stdout"]:
        err = os.open(request["stderr"], flags, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in {null, out, err}:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    sys.argv = ["-m", *request["args"]]
    # Exceptions and SystemExit leave through the parent's loop to the interpreter's own exit.
    runpy.run_module("permitapi", run_name="__main__", alter_sys=True)
    sys.exit(0)

problems = check_fresh()
# What the imports built is never garbage: in the permanent generation, a child's collections
# (the last one at its exit above all) skip it instead of touching, so copying, every page the
# parent shares with it (0.8 s of CPU per command otherwise).
gc.freeze()
wakeup = os.pipe()
for fd in wakeup:
    os.set_blocking(fd, False)
signal.set_wakeup_fd(wakeup[1])
signal.signal(signal.SIGCHLD, lambda number, frame: None)
selector = selectors.DefaultSelector()
selector.register(0, selectors.EVENT_READ)
selector.register(wakeup[0], selectors.EVENT_READ)
pending = b""
report({"ready": os.getpid(), "problems": problems})
while True:
    for key, _ in selector.select():
        if key.fd == wakeup[0]:
            while True:
                try:
                    if not os.read(wakeup[0], 4096):
                        break
                except BlockingIOError:
                    break
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            sys.exit(0)
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                child(request, wakeup)
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
    """The forking parent; `spawn` starts a command, `run` runs one to its end, `close` ends
    every child and the parent."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        """`env`: the parent's own environment (`cli_env(None)`: no PERMITAPI_* settings,
        the package under test on PYTHONPATH); each child gets the one its request gives."""
        self.workdir = workdir
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._changed = threading.Condition()
        self._requests = threading.Lock()
        self._pids: dict[int, int] = {}
        self.exits: dict[int, int] = {}
        self.children: list[Child] = []
        self._problems: list[str] | None = None
        self._ids = itertools.count()
        threading.Thread(target=self._read, daemon=True).start()
        self._wait(
            lambda: self._problems is not None, STARTUP_SECONDS, "the forking parent did not start"
        )
        assert not self._problems, f"the forking parent is not fresh: {self._problems}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message: dict[str, Any] = json.loads(line)
            with self._changed:
                if "ready" in message:
                    self._problems = message["problems"]
                elif "spawned" in message:
                    self._pids[message["spawned"]] = message["pid"]
                    # A reused pid: the exit recorded under it was an earlier child's.
                    self.exits.pop(message["pid"], None)
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

    def alive(self) -> bool:
        return self.process.poll() is None

    def _fork(
        self, name: str, args: tuple[str, ...], cwd: Path, env: dict[str, str], out: Path, err: Path
    ) -> Child:
        with self._requests:
            request_id = next(self._ids)
            request = {
                "id": request_id,
                "args": list(args),
                "cwd": str(cwd),
                "env": env,
                "stdout": str(out),
                "stderr": str(err),
            }
            assert self.process.stdin is not None
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        self._wait(lambda: request_id in self._pids, 10, f"{name} was not started")
        child = Child(self, name, self._pids[request_id], out)
        self.children.append(child)
        return child

    def spawn(self, name: str, *args: str, cwd: Path, env: dict[str, str]) -> Child:
        """`permitapi *args` in a new child, stdout and stderr in `<cwd>/<name>-<n>.log`."""
        index = 0
        while (log := cwd / f"{name}-{index}.log").exists():
            index += 1
        log.touch()
        return self.start(name, *args, cwd=cwd, env=env, log=log)

    def start(self, name: str, *args: str, cwd: Path, env: dict[str, str], log: Path) -> Child:
        """`permitapi *args` in a new child, stdout and stderr in `log`."""
        return self._fork(name, args, cwd, env, log, log)

    def run(
        self, *args: str, cwd: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """`permitapi *args` to its end, as `subprocess.run(..., capture_output=True,
        text=True)` would give it; killed, and the test failed, after `timeout` seconds."""
        fd, out_name = tempfile.mkstemp(prefix="stdout-", dir=self.workdir)
        os.close(fd)
        fd, err_name = tempfile.mkstemp(prefix="stderr-", dir=self.workdir)
        os.close(fd)
        out, err = Path(out_name), Path(err_name)
        try:
            child = self._fork("permitapi", args, cwd, env, out, err)
            self.children.remove(child)  # waited for here, never left running
            finished = self.wait_exit(child.pid, timeout)
            if not finished:
                child.sigkill()
            stdout, stderr = _decoded(out), _decoded(err)
        finally:
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)
        command = ["permitapi", *args]
        assert finished, (
            f"{' '.join(command)} did not exit within {timeout} s and was killed\n"
            f"--- stdout ---\n{stdout[-4000:]}\n--- stderr ---\n{stderr[-4000:]}"
        )
        code = self.exits.pop(child.pid)
        return subprocess.CompletedProcess(command, code, stdout, stderr)

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


def _decoded(path: Path) -> str:
    # As subprocess decodes text=True output: the locale's encoding, universal newlines.
    return path.read_text(encoding=locale.getpreferredencoding(False))


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
