"""When a failed delivery is attempted again.

Eight attempts in all over about two days. Attempt n+1 (after n failures) is due at a moment
drawn uniformly ("full jitter") from the n-th window after the delivery was created:

    attempt 2: 0-1 min    attempt 5: 1-4 h     attempt 8: 24-48 h
    attempt 3: 1-10 min   attempt 6: 4-10 h
    attempt 4: 10-60 min  attempt 7: 10-24 h

Windows rather than multiplied delays keep the whole schedule inside two days whatever the
draws, while spreading many receivers' retries apart. A valid Retry-After moves the next
attempt later (never earlier), by at most `RETRY_AFTER_CAP`; the value arrives already capped
(kit/retry_after.py) and is capped again here before any date arithmetic.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Final

from permitapi.kit.retry_after import MAX_RETRY_AFTER_SECONDS

MAX_ATTEMPTS: Final = 8
WINDOW_EDGES: Final = (
    timedelta(0),
    timedelta(minutes=1),
    timedelta(minutes=10),
    timedelta(hours=1),
    timedelta(hours=4),
    timedelta(hours=10),
    timedelta(hours=24),
    timedelta(hours=48),
)
RETRY_AFTER_CAP: Final = timedelta(seconds=MAX_RETRY_AFTER_SECONDS)
MIN_DELAY: Final = timedelta(seconds=1)


def next_attempt_at(
    *,
    created_at: datetime,
    failed_attempts: int,
    now: datetime,
    retry_after_seconds: float | None = None,
    rng: random.Random | None = None,
) -> datetime | None:
    """The due time of the next attempt, or None when the delivery is out of attempts."""
    if failed_attempts >= MAX_ATTEMPTS:
        return None
    low, high = WINDOW_EDGES[failed_attempts - 1], WINDOW_EDGES[failed_attempts]
    span = (high - low).total_seconds()
    draw = (rng or random).uniform(0.0, span)
    due = max(created_at + low + timedelta(seconds=draw), now + MIN_DELAY)
    if retry_after_seconds is not None and retry_after_seconds > 0:
        wait = min(retry_after_seconds, RETRY_AFTER_CAP.total_seconds())
        due = max(due, now + timedelta(seconds=wait))
    return due
