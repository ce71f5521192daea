"""Tables: monthly usage meters."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base


class UsageMeter(Base):
    """Units used by one key on one meter in one UTC calendar month.

    `used` includes credits reserved by requests still in flight; a release subtracts them.
    Values above the month's limit are accrued overage units.
    """

    __tablename__ = "usage_meters"

    api_key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id"), primary_key=True)
    meter: Mapped[str] = mapped_column(String(20), primary_key=True)
    period: Mapped[str] = mapped_column(String(7), primary_key=True)
    used: Mapped[int] = mapped_column(Integer, default=0)
