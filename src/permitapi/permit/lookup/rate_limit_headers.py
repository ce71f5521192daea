"""Rate-limit headers after a stored read's settlement (`metering.metered` holds the rule:
reserve, then keep or give back the credit with the read's outcome).

Authentication set the headers before the reservation; a kept reservation moves the meter, so
the headers are refreshed from the tracker. A released one leaves them as they were.
"""

from __future__ import annotations

from fastapi import Request

from permitapi.permit.lookup.metering import MeterTracker
from permitapi.usage.auth_dependencies import record_meter


def settle_headers(request: Request, meter: MeterTracker) -> None:
    if meter.state is not None:
        record_meter(request, meter.state)
