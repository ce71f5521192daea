"""Table: every permit identity the permit_created monitor has observed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class ObservedPermit(Base):
    """`last_observed_at` moves on every pass that reads the identity again (a permit stays
    in the three-day window for about three passes); identities unseen for the retention
    window are forgotten, long after they left the window."""

    __tablename__ = "permit_created_identities"
    __table_args__ = (Index("ix_permit_created_identities_last_observed_at", "last_observed_at"),)

    jurisdiction: Mapped[str] = mapped_column(String(64), primary_key=True)
    permit_number: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_observed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_observed_at: Mapped[datetime] = mapped_column(UTCDateTime())
