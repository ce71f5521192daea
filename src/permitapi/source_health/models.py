"""Tables: one row per portal fetch outcome."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class SourceFetch(Base):
    __tablename__ = "source_fetches"
    __table_args__ = (Index("ix_source_fetches_source_occurred_at", "source", "occurred_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(64))  # jurisdiction slug
    operation: Mapped[str] = mapped_column(String(16))  # fetch | search | health
    # success | not_found | retry_later | portal_changed | blocked
    outcome: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str | None] = mapped_column(String(200), nullable=True)
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime())
