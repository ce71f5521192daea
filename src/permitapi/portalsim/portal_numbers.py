"""How each simulated portal writes its own record numbers. The simulator keeps these rules
itself (the API's number normaliser lives in `sources` and is what the tests check against)."""

from __future__ import annotations

import re

_LADBS = re.compile(r"^(\d{1,5})[\s\-._/]+(\d{1,5})[\s\-._/]+(\d{1,5})$")
_EPIC = re.compile(r"^([A-Z]{2,5})-?([A-Z]{4})(\d{12})$")


def ladbs_number(raw: str) -> str | None:
    """PCIS numbers are three five-digit groups joined by dashes; None for anything else."""
    text = raw.strip()
    compact = re.sub(r"\s+", "", text)
    if re.fullmatch(r"\d{15}", compact):
        return f"{compact[:5]}-{compact[5:10]}-{compact[10:]}"
    match = _LADBS.fullmatch(text)
    return "-".join(group.zfill(5) for group in match.groups()) if match else None


def portal_number(family: str, raw: str) -> str:
    """The number as the family's portal prints it."""
    if family == "ladbs":
        return ladbs_number(raw) or re.sub(r"\s+", "", raw).upper()
    if family == "epicla":
        text = re.sub(r"\s+", "", raw).upper()
        match = _EPIC.fullmatch(text)
        return f"{match.group(1)}-{match.group(2)}{match.group(3)}" if match else text
    return re.sub(r"[\s\-_.]+", "-", raw.strip().upper()).strip("-")
