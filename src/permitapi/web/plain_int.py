"""`PlainInt`: an integer query parameter written with the digits 0-9 only.

Pydantic's lax integers read `1_0` as 10, `10.0` and `+10` too (Python's own rules); a client
who wrote those meant something else or is probing. Refused as any malformed parameter is
(400 `invalid_parameter`, naming it), before the value is used.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import BeforeValidator

_DIGITS: Final = re.compile(r"[0-9]{1,18}")


def _plain_digits(value: object) -> object:
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise ValueError("must be written with the digits 0-9 only")
    return value


PlainInt = Annotated[int, BeforeValidator(_plain_digits)]
