"""Tables: watches (a key monitoring a permit) and the daily check's state per watched permit."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class Watch(Base):
    """`status`: active, completed (the permit reached a terminal status: the slot is free),
    removed (DELETE). Ended watches are kept: their history explains past events."""

    __tablename__ = "watches"
    __table_args__ = (
        Index("ix_watches_api_key_id_status", "api_key_id", "status"),
        Index("ix_watches_permit_status", "jurisdiction", "permit_number", "status"),
        Index(
            "uq_watches_active",
            "api_key_id",
            "jurisdiction",
            "permit_number",
            unique=True,
            sqlite_where=text("status = 'active'"),
            postgresql_where=text("status = 'active'"),
        ),
    )

    watch_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    api_key_id: Mapped[str] = mapped_column(String(36))
    jurisdiction: Mapped[str] = mapped_column(String(64))
    permit_number: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_event_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class WatchedPermit(Base):
    """One row per permit with at least one active watch: the daily check reads each permit
    once whatever the number of keys watching it. `change_signature` is what the source's
    change feed said last time (status text and dates); a different answer means a change."""

    __tablename__ = "watched_permits"
    __table_args__ = (Index("ix_watched_permits_next_check_at", "next_check_at"),)

    jurisdiction: Mapped[str] = mapped_column(String(64), primary_key=True)
    permit_number: Mapped[str] = mapped_column(String(64), primary_key=True)
    change_signature: Mapped[str | None] = mapped_column(String(400), nullable=True)
    next_check_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_check_error: Mapped[str | None] = mapped_column(String(300), nullable=True)
