"""LADBS PCIS permit numbers: three five-digit groups, `NNNNN-NNNNN-NNNNN`."""

from __future__ import annotations

import re

_GROUPS = re.compile(r"^\s*(\d{1,5})[-\s]+(\d{1,5})[-\s]+(\d{1,5})\s*$")
_DIGITS = re.compile(r"^\s*(\d{5})(\d{5})(\d{5})\s*$")


def normalize_permit_number(raw: str) -> str | None:
    """`21016 20000 20141`, `21016-20000-20141` or `210162000020141` -> `21016-20000-20141`.

    Each group is zero-padded to five digits (public code does the same); anything else is not
    an LADBS number and gives None.
    """
    match = _GROUPS.match(raw) or _DIGITS.match(raw.replace("-", "").replace(" ", ""))
    if match is None:
        return None
    return "-".join(group.zfill(5) for group in match.groups())


def permit_parts(normalized: str) -> tuple[str, str, str]:
    first, second, third = normalized.split("-")
    return first, second, third


def inspection_spellings(normalized: str) -> tuple[str, str]:
    """The two spellings the inspections dataset mixes in its `permit` column (spaces, dashes)."""
    return normalized.replace("-", " "), normalized


def permit_key(value: str) -> str:
    """Separator-free key for comparing permit numbers across datasets."""
    return re.sub(r"[^0-9A-Za-z]", "", value)
