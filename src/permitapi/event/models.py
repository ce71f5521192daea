"""Tables: the domain event outbox and the per-key feed entries it fans out to."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class DomainEvent(Base):
    """One canonical event. `seq` is the ingestion order the events feed pages by."""

    __tablename__ = "domain_events"
    __table_args__ = (
        Index("ix_domain_events_api_key_id_seq", "api_key_id", "seq"),
        Index("ix_domain_events_created_at", "created_at"),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    event_id: Mapped[str] = mapped_column(String(36), unique=True)
    event_type: Mapped[str] = mapped_column(String(40))
    # The key the event was emitted for when there is exactly one (operation_completed: the
    # operation's owner; criteria_match: the saved search's owner). Who sees the event is
    # `event_feed`, not this column.
    api_key_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    permit_number: Mapped[str | None] = mapped_column(String(64), nullable=True)
    jurisdiction: Mapped[str | None] = mapped_column(String(64), nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class FeedEntry(Base):
    """One event in one key's feed. The primary key (api_key_id, event_seq) is the index the
    feed's keyset pagination walks, so a page costs the same whatever the table's size."""

    __tablename__ = "event_feed"
    __table_args__ = (Index("ix_event_feed_created_at", "created_at"),)

    api_key_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    event_seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
