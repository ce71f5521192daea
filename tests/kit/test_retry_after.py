"""The one Retry-After parser (kit/retry_after.py): ASCII delta-seconds or an HTTP-date, capped
before any arithmetic, anything else ignored; fed arbitrary header values by hypothesis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from permitapi.kit.retry_after import MAX_RETRY_AFTER_SECONDS, parse_retry_after
from permitapi.webhook import schedule

NOW = datetime(2026, 3, 10, 3, 0, tzinfo=UTC)
CAP = float(MAX_RETRY_AFTER_SECONDS)

# Header values as they arrive: any text, digit strings of any length and script, dates.
HEADER_VALUES = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(categories=["Nd", "No"]), min_size=1),
    st.from_regex(r"\A[ \t]*[0-9]{1,40}[ \t]*\Z"),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
)


@settings(max_examples=400, deadline=None, database=None)
@given(value=HEADER_VALUES)
def test_any_header_value_is_a_capped_wait_or_ignored(value: str) -> None:
    wait = parse_retry_after(value, now=NOW)
    if wait is None:
        return
    assert 0.0 <= wait <= CAP
    # What the webhook schedule does with it never overflows.
    due = schedule.next_attempt_at(
        created_at=NOW, failed_attempts=1, now=NOW, retry_after_seconds=wait
    )
    assert due is not None
    assert NOW < due <= NOW + timedelta(seconds=CAP)


def test_delta_seconds_and_dates() -> None:
    assert parse_retry_after("7", now=NOW) == 7.0
    assert parse_retry_after(" 120\t", now=NOW) == 120.0
    assert parse_retry_after("0", now=NOW) == 0.0
    assert parse_retry_after("Tue, 10 Mar 2026 03:10:00 GMT", now=NOW) == 600.0
    assert parse_retry_after("Tuesday, 10-Mar-26 03:10:00 GMT", now=NOW) == 600.0
    assert parse_retry_after("Tue Mar 10 03:10:00 2026", now=NOW) == 600.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=NOW) == 0.0


def test_huge_values_are_capped_before_any_arithmetic() -> None:
    assert parse_retry_after("99999999999999999999", now=NOW) == CAP
    assert parse_retry_after("9" * 5000, now=NOW) == CAP  # int() would refuse 4,300+ digits
    assert parse_retry_after("0" * 30 + "5", now=NOW) == 5.0
    assert parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now=NOW) == CAP
    assert parse_retry_after("86400", now=NOW, cap_seconds=60) == 60.0


def test_anything_else_is_ignored() -> None:
    unicode_digits = ("\u00b2", "\u0661\u0662\u0660", "\uff11\uff12\uff10")
    others = ("", "   ", "soon", "-5", "+5", "1.5", "1e3", "inf", "nan", "0x10", "1_000",
              "Mon, 99 Foo 2026", "Fri, 31 Dec 10000 23:59:59 GMT")  # fmt: skip
    for value in (*unicode_digits, *others, None):
        assert parse_retry_after(value, now=NOW) is None, value
