"""Tables: webhook registrations and their deliveries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class Webhook(Base):
    __tablename__ = "webhooks"

    webhook_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    api_key_id: Mapped[str] = mapped_column(String(36), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[list[str]] = mapped_column(JSON)
    # None: every jurisdiction.
    jurisdiction_filter: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    is_active: Mapped[bool] = mapped_column(Boolean)
    # Why an inactive webhook is inactive: deleted (DELETE), deactivated (PATCH), gone (410),
    # failures (consecutive_failures past the threshold).
    disabled_reason: Mapped[str | None] = mapped_column(String(40), nullable=True)
    # The full `whsec_...` strings; shown only at creation and rotation.
    secret: Mapped[str] = mapped_column(String(128))
    previous_secret: Mapped[str | None] = mapped_column(String(128), nullable=True)
    previous_secret_valid_until: Mapped[datetime | None] = mapped_column(
        UTCDateTime(), nullable=True
    )
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_triggered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Set by DELETE, the contract's soft deactivation: the webhook stays listed and its
    # deliveries readable, inactive for good (changes are 409 webhook_deleted).
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The worker attempting this webhook's deliveries, until when: at most one attempt per
    # webhook is in flight, and a killed worker's claim lapses (its deliveries stay pending).
    delivery_lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    delivery_lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_webhook_id_created_at", "webhook_id", "created_at"),
        Index("ix_webhook_deliveries_created_at", "created_at"),
    )

    delivery_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    webhook_id: Mapped[str] = mapped_column(String(36))
    event_id: Mapped[str] = mapped_column(String(36))
    event_type: Mapped[str] = mapped_column(String(40))
    # pending, delivered, dead
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # The exact bytes sent and signed (UTF-8 JSON).
    payload: Mapped[str] = mapped_column(Text)
    # The envelope's `timestamp`: kept by retries and by manual replays.
    event_timestamp: Mapped[datetime] = mapped_column(UTCDateTime())
    replay_of: Mapped[str | None] = mapped_column(String(36), nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
