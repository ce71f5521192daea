"""In-process moving windows (burst and force_refresh limits without Redis)."""

from __future__ import annotations

from permitapi.kit.burst import LimitsMemoryWindows, LocalWindows


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_moving_window_refuses_then_frees_one_slot_at_a_time() -> None:
    ticks = Ticks()
    windows = LocalWindows(ticks)
    key = ("burst", "k1")
    for second in range(3):
        ticks.now = 1000.0 + second * 10
        assert windows.hit(key, 3, 60).allowed
    ticks.now = 1030.0
    refused = windows.hit(key, 3, 60)
    assert not refused.allowed
    assert refused.retry_after_seconds == 30  # the first call leaves the window at 1060
    assert windows.hit(("burst", "k2"), 3, 60).allowed  # other keys are independent
    ticks.now = 1060.0
    assert windows.hit(key, 3, 60).allowed
    assert not windows.hit(key, 3, 60).allowed


def test_idle_keys_are_swept() -> None:
    ticks = Ticks()
    windows = LocalWindows(ticks)
    windows.SWEEP_EVERY = 2
    windows.hit(("burst", "idle"), 5, 60)
    ticks.now += 120
    windows.hit(("burst", "busy"), 5, 60)
    assert ("burst", "idle") not in windows._logs


def test_limits_memory_storage_gives_the_same_verdicts() -> None:
    """The `limits` sync-memory variant kept for the bench comparison refuses the same hit."""
    windows = LimitsMemoryWindows()
    verdicts = [windows.hit(("burst", "k"), 3, 60.0) for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert 1 <= verdicts[-1].retry_after_seconds <= 60
    assert windows.hit(("burst", "other"), 3, 60.0).allowed
