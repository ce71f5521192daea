"""Table: coverage observations."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class CoverageObservation(Base):
    """Which fields one successful lookup found, with no permit or customer identifiers."""

    __tablename__ = "coverage_observations"
    __table_args__ = (Index("ix_coverage_observations_j_at", "jurisdiction", "observed_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    jurisdiction: Mapped[str] = mapped_column(String(64))
    fields_present: Mapped[dict[str, bool]] = mapped_column(JSON)
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime())
