"""The one Retry-After parser, for webhook receivers and portals alike (RFC 9110 §10.2.3).

A value is either delta-seconds (ASCII digits only) or an HTTP-date; anything else (Unicode
digits, signs, fractions, garbage) is ignored, as if no header had been sent. The wait is
capped before any arithmetic is done with it: a receiver answering `Retry-After:
99999999999999999999` must not make a `timedelta` overflow, and a huge digit string is never
converted whole (Python refuses int() of more than 4,300 digits).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

# Nobody is asked to wait longer than this, whatever they sent.
MAX_RETRY_AFTER_SECONDS: Final = 12 * 3600
_DELTA_SECONDS: Final = re.compile(r"[0-9]+")
# Longer digit strings are above any cap: they are never converted.
_MAX_DIGITS: Final = 12
# An HTTP-date is at most 29 characters (IMF-fixdate) or 30 (RFC 850 with a long day name).
_MAX_DATE_LENGTH: Final = 64
_WHITESPACE: Final = " \t"


def parse_retry_after(
    value: str | None,
    *,
    now: datetime | None = None,
    cap_seconds: float = MAX_RETRY_AFTER_SECONDS,
) -> float | None:
    """Seconds to wait, between 0 and `cap_seconds`; None when absent or not valid."""
    if value is None:
        return None
    text = value.strip(_WHITESPACE)
    if not text or not text.isascii():
        return None
    if _DELTA_SECONDS.fullmatch(text):
        if len(text.lstrip("0")) > _MAX_DIGITS:
            return float(cap_seconds)
        return float(min(int(text), cap_seconds))
    return _http_date_wait(text, now or datetime.now(UTC), cap_seconds)


def _http_date_wait(text: str, now: datetime, cap_seconds: float) -> float | None:
    if len(text) > _MAX_DATE_LENGTH or not text[:1].isalpha():
        return None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        seconds = (moment - now).total_seconds()
    except OverflowError:
        return None
    return min(max(0.0, seconds), float(cap_seconds))
