"""Tables: saved searches and the permit identities each has seen."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class SavedSearch(Base):
    """One key's stored discovery criteria and the state of their daily evaluation.

    `status`: active or paused. `baseline_taken_at` is null until the first successful
    evaluation (the silent baseline); new criteria set it back to null. `generation` counts
    criteria changes: an evaluation that read the sources under an older generation writes
    nothing (its reads answered other criteria).
    """

    __tablename__ = "saved_searches"
    __table_args__ = (Index("ix_saved_searches_api_key_id_status", "api_key_id", "status"),)

    saved_search_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    api_key_id: Mapped[str] = mapped_column(String(36))
    name: Mapped[str] = mapped_column(String(100))
    # As the client sent them (validated); parsed again for every evaluation.
    criteria: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16))
    generation: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    baseline_taken_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_evaluated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_success_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_match_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    last_error_message: Mapped[str | None] = mapped_column(String(500), nullable=True)


class SavedSearchIdentity(Base):
    """A permit identity a saved search has seen: in its baseline or as a match since.
    `last_seen_at` moves whenever an evaluation reads it again; identities unseen for the
    retention window are forgotten."""

    __tablename__ = "saved_search_identities"
    __table_args__ = (
        Index("ix_saved_search_identities_last_seen_at", "saved_search_id", "last_seen_at"),
    )

    saved_search_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    jurisdiction: Mapped[str] = mapped_column(String(64), primary_key=True)
    permit_number: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
