"""The `job_leases` table: one row per periodic pass (worker/leases.py has the claim rule).

`owner` holds the pass until `leased_until`; `last_completed_at` says when it is next due.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class JobLease(Base):
    __tablename__ = "job_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    leased_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
