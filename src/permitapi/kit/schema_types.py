"""String types that say what their text is in the JSON Schema (OpenAPI and MCP output
schemas): the API serialises its own times as RFC 3339 strings, so the models hold `str`, and
without these the document would call a timestamp a plain string."""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

# An RFC 3339 date-time, always UTC with Z (kit.clock.isoformat_z).
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]

# A portal's moment: a date-time when the portal publishes the time, a date when only the day.
Moment = Annotated[
    str,
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
    ),
]
