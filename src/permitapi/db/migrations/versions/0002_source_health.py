"""source health: one row per portal fetch outcome

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "source_fetches",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("operation", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("reason", sa.String(200), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("occurred_at", sa.DateTime(timezone=False), nullable=False),
    )
    op.create_index(
        "ix_source_fetches_source_occurred_at", "source_fetches", ["source", "occurred_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_source_fetches_source_occurred_at", "source_fetches")
    op.drop_table("source_fetches")
