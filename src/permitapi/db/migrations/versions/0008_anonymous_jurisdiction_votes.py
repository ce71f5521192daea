"""anonymous votes for requested jurisdictions: one per client address per jurisdiction

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "jurisdiction_request_address_votes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "request_id",
            sa.Integer(),
            sa.ForeignKey("jurisdiction_requests.id"),
            nullable=False,
        ),
        sa.Column("address_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("request_id", "address_hash"),
    )


def downgrade() -> None:
    op.drop_table("jurisdiction_request_address_votes")
