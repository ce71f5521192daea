"""Tables: operations, claimed by workers through expiring leases."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class Operation(Base):
    __tablename__ = "operations"
    __table_args__ = (Index("ix_operations_status_next_run_at", "status", "next_run_at"),)

    operation_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    api_key_id: Mapped[str] = mapped_column(String(36), index=True)
    operation_type: Mapped[str] = mapped_column(String(32))  # permit_refresh
    status: Mapped[str] = mapped_column(String(12))  # pending | running | succeeded | failed
    permit_number: Mapped[str] = mapped_column(String(64))
    jurisdiction: Mapped[str] = mapped_column(String(64))
    force_refresh: Mapped[bool] = mapped_column(Boolean)
    # The credits reserved at acceptance: consumed on success, released on failure.
    reserved_meter: Mapped[str | None] = mapped_column(String(20), nullable=True)
    reserved_period: Mapped[str | None] = mapped_column(String(7), nullable=True)
    reserved_units: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_run_at: Mapped[datetime] = mapped_column(UTCDateTime())
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
