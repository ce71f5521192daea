"""Progress of a job pass, for an operator watching `permitapi jobs run`.

A job source reports what it is doing through `expect(total)` and `advance(count)`; both do
nothing unless a reporter is installed with `reporting(...)` (the CLI installs one, the worker
does not). A context variable carries the reporter, so a source's concurrent tasks reach it
without passing it down every call.

Two reporters: `Bar` redraws one line on a terminal; `Counts` writes a line at most every
`every` seconds, for logs and pipes.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import Final, Protocol, TextIO


class Reporter(Protocol):
    def expect(self, total: int) -> None: ...

    def advance(self, count: int) -> None: ...

    def finish(self) -> None: ...


_CURRENT: Final[contextvars.ContextVar[Reporter | None]] = contextvars.ContextVar(
    "permitapi_job_progress", default=None
)


def expect(total: int) -> None:
    """This pass has `total` items to go through (when it knows)."""
    reporter = _CURRENT.get()
    if reporter is not None:
        reporter.expect(total)


def advance(count: int = 1) -> None:
    """`count` more items are done."""
    reporter = _CURRENT.get()
    if reporter is not None and count:
        reporter.advance(count)


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[Reporter]:
    token = _CURRENT.set(reporter)
    try:
        yield reporter
    finally:
        _CURRENT.reset(token)
        reporter.finish()


class _Tally:
    def __init__(self, name: str, stream: TextIO) -> None:
        self.name = name
        self.stream = stream
        self.done = 0
        self.total: int | None = None

    def expect(self, total: int) -> None:
        self.total = (self.total or 0) + total
        self.show()

    def advance(self, count: int) -> None:
        self.done += count
        self.show()

    def counts(self) -> str:
        return f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"

    def show(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        raise NotImplementedError


class Bar(_Tally):
    """`name [#########...........] 12/40` redrawn in place (a count alone when the total is
    unknown); the line is ended when the pass finishes."""

    WIDTH: Final = 30

    def __init__(self, name: str, stream: TextIO) -> None:
        super().__init__(name, stream)
        self.drawn = False

    def show(self) -> None:
        if self.total:
            filled = min(self.WIDTH, self.WIDTH * self.done // self.total)
            bar = "[" + "#" * filled + "." * (self.WIDTH - filled) + "] "
        else:
            bar = ""
        self.stream.write(f"\r{self.name} {bar}{self.counts()}")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


class Counts(_Tally):
    """`name: 12/40 done` at most every `every` seconds, and once more at the end."""

    def __init__(
        self,
        name: str,
        stream: TextIO,
        every: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name, stream)
        self.every = every
        self.clock = clock
        self.last: float | None = None
        self.shown = ""

    def show(self) -> None:
        now = self.clock()
        if self.last is None or now - self.last >= self.every:
            self._write()
            self.last = now

    def _write(self) -> None:
        line = f"{self.name}: {self.counts()} done"
        if line != self.shown:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.shown = line

    def finish(self) -> None:
        if self.last is not None:
            self._write()
