"""Record numbers that fullmatch an agency's registry pattern, and the opaque capIDs."""

from __future__ import annotations

import hashlib
import random
import re

from permitapi.sources.base import PermitSnapshot

_TOKEN = re.compile(r"\[A-Z\]|\\d|\(|\)\??|\{(\d+)(?:,(\d+))?\}|.", re.DOTALL)
PREFIXES = ("BLD", "RES", "COM", "MEC", "ELE", "PLM", "ROOF", "B", "BR", "BP", "PMT", "STRUC")


def sample_number(pattern: str, rng: random.Random) -> str:
    """A string matching a registry pattern built from [A-Z], \\d, {m,n}, literals and (...)?.

    Letter runs prefer real-looking prefixes (BLD, RES, ...) of an allowed length.
    """
    body = pattern.removeprefix("^").removesuffix("$")
    out, _ = _sample(body, 0, rng)
    if not re.fullmatch(pattern, out):
        raise ValueError(f"cannot sample {pattern!r}: got {out!r}")
    return out


def _sample(body: str, pos: int, rng: random.Random) -> tuple[str, int]:
    parts: list[str] = []
    while pos < len(body):
        match = _TOKEN.match(body, pos)
        assert match is not None
        piece = match.group(0)
        pos = match.end()
        if piece == "(":
            inner, pos = _sample(body, pos, rng)
            optional = body.startswith(")?", pos)
            pos += 2 if optional else 1
            if not optional or rng.random() < 0.5:
                parts.append(inner)
            continue
        if piece.startswith(")"):
            return "".join(parts), pos - len(piece)
        low, high = 1, 1
        quant = _TOKEN.match(body, pos)
        if quant is not None and quant.group(1) is not None:
            low = int(quant.group(1))
            high = int(quant.group(2)) if quant.group(2) else low
            pos = quant.end()
        count = rng.randint(low, high)
        if piece == "[A-Z]":
            fits = [p for p in PREFIXES if low <= len(p) <= high]
            parts.append(
                rng.choice(fits)
                if fits
                else "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(count))
            )
        elif piece == "\\d":
            # Agency numbers read like BLD24-01234: a two-digit year, then a 5-digit serial.
            seen_digits = any(ch.isdigit() for ch in "".join(parts))
            preferred = 2 if not seen_digits and low <= 2 <= high else min(high, max(low, 5))
            count = preferred if rng.random() < 0.8 else count
            parts.append("".join(rng.choice("0123456789") for _ in range(count)))
        else:
            parts.append(piece.replace("\\", "") * count)
    return "".join(parts), pos


_CAP_KIND = {"Building": "BLD", "Enforcement": "ENF", "Planning": "PLN", "Permits": "CAP"}
_ALNUM = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"


def cap_id_of(permit: PermitSnapshot) -> tuple[str, str, str]:
    """Accela's internal id for a simulated record: year + kind, 00000, and a hash-derived
    five-character serial. It depends on nothing the adapter could derive it from."""
    year = permit.applied_date.year % 100 if permit.applied_date else 0
    group = (permit.permit_type or "Building").split("/")[0]
    digest = hashlib.sha256(f"{permit.jurisdiction}|{permit.permit_number}".encode()).digest()
    value = int.from_bytes(digest[:8], "big")
    serial = ""
    for _ in range(5):
        value, index = divmod(value, len(_ALNUM))
        serial += _ALNUM[index]
    return f"{year:02d}{_CAP_KIND.get(group, 'CAP')}", "00000", serial
