"""Client-supplied numbers and dates in their plain ASCII spelling only.

Python's own parsers accept more than a person means: `float("1_000")` is 1000, `float("inf")`
and `float("nan")` are numbers, `float("1e3")` is an exponent form no portal query language
takes, and `int()` reads Arabic-Indic or full-width digits. Client input is first normalised
with NFKC (full-width digits U+FF10..U+FF19 become 0..9, as some keyboards send them); what
is then not a plain decimal is refused by the caller.

The other way, `plain_decimal` writes numbers into portal query languages: Python writes small
and large floats with an exponent (`repr(0.00001)` is `1e-05`), which neither SoQL nor ArcGIS
SQL accepts, so a client's `value_min=0.00001` would reach the portal as a syntax error and be
mistaken for an outage.
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal
from typing import Final

# Sign, digits, an optional fraction: `12`, `-0.5`, `.5`, `5.`. Nothing else.
_PLAIN_DECIMAL: Final = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
MAX_NUMBER_CHARS: Final = 32


def ascii_form(text: str) -> str:
    """NFKC: compatibility characters (full-width digits and letters) to their plain form."""
    return unicodedata.normalize("NFKC", text)


def parse_plain_decimal(text: str) -> float | None:
    """The value of a plain decimal (after NFKC), or None for anything else."""
    candidate = ascii_form(text).strip()
    if len(candidate) > MAX_NUMBER_CHARS or not _PLAIN_DECIMAL.fullmatch(candidate):
        return None
    value = float(candidate)
    return value if math.isfinite(value) else None


def plain_decimal(value: float) -> str:
    """The shortest decimal that reads back as the same float, never an exponent:
    `1e-05` -> `0.00001`, `1.5e+16` -> `15000000000000000`, `2.0` -> `2`."""
    number = float(value)
    if not math.isfinite(number):
        # Input parsing refuses these before any query is built: reaching here is our defect.
        raise ValueError(f"{number!r} has no decimal literal")
    text = format(Decimal(repr(number)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
