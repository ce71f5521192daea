"""permit watches and the daily check's per-permit state

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "watches",
        sa.Column("watch_id", sa.String(36), primary_key=True),
        sa.Column("api_key_id", sa.String(36), nullable=False),
        sa.Column("jurisdiction", sa.String(64), nullable=False),
        sa.Column("permit_number", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=True),
        sa.Column("last_event_at", TS, nullable=True),
    )
    op.create_index("ix_watches_api_key_id_status", "watches", ["api_key_id", "status"])
    op.create_index(
        "ix_watches_permit_status", "watches", ["jurisdiction", "permit_number", "status"]
    )
    # One active watch per key and permit, on both engines (partial unique index).
    op.create_index(
        "uq_watches_active",
        "watches",
        ["api_key_id", "jurisdiction", "permit_number"],
        unique=True,
        sqlite_where=sa.text("status = 'active'"),
        postgresql_where=sa.text("status = 'active'"),
    )
    op.create_table(
        "watched_permits",
        sa.Column("jurisdiction", sa.String(64), primary_key=True),
        sa.Column("permit_number", sa.String(64), primary_key=True),
        sa.Column("change_signature", sa.String(400), nullable=True),
        sa.Column("next_check_at", TS, nullable=False),
        sa.Column("last_checked_at", TS, nullable=True),
        sa.Column("last_check_error", sa.String(300), nullable=True),
    )
    op.create_index("ix_watched_permits_next_check_at", "watched_permits", ["next_check_at"])


def downgrade() -> None:
    op.drop_index("ix_watched_permits_next_check_at", "watched_permits")
    op.drop_table("watched_permits")
    op.drop_index("uq_watches_active", "watches")
    op.drop_index("ix_watches_permit_status", "watches")
    op.drop_index("ix_watches_api_key_id_status", "watches")
    op.drop_table("watches")
