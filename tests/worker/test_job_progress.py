"""worker.progress: what a job source reports reaches the reporter the CLI installed (and
nothing happens without one); counts are written at most every N seconds, a bar in place."""

from __future__ import annotations

import asyncio
import io

from permitapi.worker import progress


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_counts_every_n_seconds_and_once_at_the_end() -> None:
    stream, clock = io.StringIO(), FakeClock()
    with progress.reporting(progress.Counts("deliveries", stream, every=5.0, clock=clock)):
        progress.expect(10)  # written at once: 0/10
        for _ in range(4):
            clock.now += 1.0
            progress.advance()  # 1..4 within 5 s of the first line: not written
        clock.now += 1.5
        # From concurrent tasks too (the context variable is copied into each task).
        await asyncio.gather(*(_advance_in_task() for _ in range(3)))  # 7 at 5.5 s: written
        clock.now += 1.0
        progress.advance(3)  # 10 at 6.5 s: not written until the end
    assert stream.getvalue().splitlines() == [
        "deliveries: 0/10 done",
        "deliveries: 5/10 done",
        "deliveries: 10/10 done",
    ]


async def _advance_in_task() -> None:
    progress.advance()


def test_without_a_reporter_nothing_is_reported_and_nothing_fails() -> None:
    progress.expect(3)
    progress.advance(2)


def test_a_bar_without_a_total_counts_and_ends_its_line() -> None:
    stream = io.StringIO()
    with progress.reporting(progress.Bar("retention", stream)):
        progress.advance(40)
        progress.advance(2)
    assert stream.getvalue() == "\rretention 40\rretention 42\n"
    quiet = io.StringIO()
    with progress.reporting(progress.Bar("retention", quiet)):
        pass
    assert quiet.getvalue() == ""  # nothing drawn, no empty line


def test_a_bar_fills_with_the_total() -> None:
    stream = io.StringIO()
    with progress.reporting(progress.Bar("watch-check", stream)):
        progress.expect(4)
        progress.advance(1)
        progress.advance(3)
    frames = stream.getvalue().split("\r")[1:]
    assert frames[0] == "watch-check [" + "." * 30 + "] 0/4"
    assert frames[1] == "watch-check [" + "#" * 7 + "." * 23 + "] 1/4"
    assert frames[-1] == "watch-check [" + "#" * 30 + "] 4/4\n"
