"""webhooks, their deliveries, and the per-key events feed

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "event_feed",
        sa.Column("api_key_id", sa.String(36), primary_key=True),
        sa.Column("event_seq", sa.Integer(), primary_key=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_domain_events_created_at", "domain_events", ["created_at"])
    op.create_table(
        "webhooks",
        sa.Column("webhook_id", sa.String(36), primary_key=True),
        sa.Column("api_key_id", sa.String(36), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("jurisdiction_filter", sa.JSON(), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.String(40), nullable=True),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("previous_secret", sa.String(128), nullable=True),
        sa.Column("previous_secret_valid_until", TS, nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("last_triggered_at", TS, nullable=True),
        sa.Column("deleted_at", TS, nullable=True),
    )
    op.create_index("ix_webhooks_api_key_id", "webhooks", ["api_key_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("delivery_id", sa.String(36), primary_key=True),
        sa.Column("webhook_id", sa.String(36), nullable=False),
        sa.Column("event_id", sa.String(36), nullable=False),
        sa.Column("event_type", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("event_timestamp", TS, nullable=False),
        sa.Column("replay_of", sa.String(36), nullable=True),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_attempt_at", TS, nullable=True),
        sa.Column("next_attempt_at", TS, nullable=True),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_expires_at", TS, nullable=True),
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
    )
    op.create_index(
        "ix_webhook_deliveries_webhook_id_created_at",
        "webhook_deliveries",
        ["webhook_id", "created_at"],
    )
    op.create_index("ix_webhook_deliveries_created_at", "webhook_deliveries", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_created_at", "webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_webhook_id_created_at", "webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_status_next_attempt_at", "webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_webhooks_api_key_id", "webhooks")
    op.drop_table("webhooks")
    op.drop_index("ix_domain_events_created_at", "domain_events")
    op.drop_table("event_feed")
