"""Table: the latest successful representation of each permit."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class PermitRecord(Base):
    """One permit identity (jurisdiction + normalised number) and its latest representation.

    `snapshot` is the JSON form of the last successful `PermitSnapshot` (permit.codec);
    `fetched_at` is when it was observed. Failed refreshes leave the snapshot alone and only
    move `last_attempted_at` / `last_failure_reason` (the stale_reason of stale answers).
    """

    __tablename__ = "permits"
    __table_args__ = (
        UniqueConstraint("jurisdiction", "permit_number"),
        Index("ix_permits_permit_number", "permit_number"),
    )

    permit_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    jurisdiction: Mapped[str] = mapped_column(String(64))
    permit_number: Mapped[str] = mapped_column(String(64))  # normalised
    display_number: Mapped[str] = mapped_column(String(64))  # as the portal shows it
    raw_status: Mapped[str | None] = mapped_column(String(200), nullable=True)
    normalized_status: Mapped[str | None] = mapped_column(String(40), nullable=True)
    status_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    permit_type: Mapped[str | None] = mapped_column(String(200), nullable=True)
    issued_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    applied_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    normalization_version: Mapped[str | None] = mapped_column(String(40), nullable=True)
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_attempted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_failure_reason: Mapped[str | None] = mapped_column(String(80), nullable=True)
    # Single flight across processes: whoever holds an unexpired refresh lease fetches.
    refresh_lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    refresh_lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
