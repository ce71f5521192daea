"""foundation: accounts, keys, meters, idempotent requests, jurisdiction requests

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Timestamps are stored as naive UTC (see permitapi.db.base.UTCDateTime).
TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("plan", sa.String(20), nullable=False),
        sa.Column("discovery_addon", sa.Boolean(), nullable=False),
        sa.Column("overage_enabled", sa.Boolean(), nullable=False),
        sa.Column("custom_lookup_limit", sa.Integer(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("account_id", sa.String(36), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("display_prefix", sa.String(20), nullable=False),
        sa.Column("is_sandbox", sa.Boolean(), nullable=False),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("deactivated_at", TS, nullable=True),
    )
    op.create_index("ix_api_keys_account_id", "api_keys", ["account_id"])
    op.create_table(
        "usage_meters",
        sa.Column("api_key_id", sa.String(36), sa.ForeignKey("api_keys.id"), primary_key=True),
        sa.Column("meter", sa.String(20), primary_key=True),
        sa.Column("period", sa.String(7), primary_key=True),
        sa.Column("used", sa.Integer(), nullable=False),
    )
    op.create_table(
        "idempotent_requests",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(80), nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=False),
        sa.Column("request_fingerprint", sa.String(64), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("lock_token", sa.String(32), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_headers", sa.Text(), nullable=True),
        sa.Column("response_body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("locked_until", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.UniqueConstraint("scope", "idempotency_key"),
    )
    op.create_index("ix_idempotent_requests_expires_at", "idempotent_requests", ["expires_at"])
    op.create_table(
        "jurisdiction_requests",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name_key", sa.String(200), nullable=False),
        sa.Column("jurisdiction_name", sa.String(200), nullable=False),
        sa.Column("state_code", sa.String(2), nullable=False),
        sa.Column("request_count", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.UniqueConstraint("name_key", "state_code"),
    )
    op.create_table(
        "jurisdiction_request_votes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "request_id", sa.Integer(), sa.ForeignKey("jurisdiction_requests.id"), nullable=False
        ),
        sa.Column("api_key_id", sa.String(36), sa.ForeignKey("api_keys.id"), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("request_id", "api_key_id"),
    )


def downgrade() -> None:
    op.drop_table("jurisdiction_request_votes")
    op.drop_table("jurisdiction_requests")
    op.drop_index("ix_idempotent_requests_expires_at", "idempotent_requests")
    op.drop_table("idempotent_requests")
    op.drop_table("usage_meters")
    op.drop_index("ix_api_keys_account_id", "api_keys")
    op.drop_table("api_keys")
    op.drop_table("accounts")
