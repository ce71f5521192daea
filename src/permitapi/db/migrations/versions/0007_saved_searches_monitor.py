"""saved searches and their identities, the permit_created monitor's observations, and the
leases of the daily passes

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "job_leases",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(64), nullable=True),
        sa.Column("leased_until", TS, nullable=True),
        sa.Column("last_completed_at", TS, nullable=True),
    )
    op.create_table(
        "saved_searches",
        sa.Column("saved_search_id", sa.String(36), primary_key=True),
        sa.Column("api_key_id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("criteria", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("baseline_taken_at", TS, nullable=True),
        sa.Column("last_evaluated_at", TS, nullable=True),
        sa.Column("last_success_at", TS, nullable=True),
        sa.Column("last_match_at", TS, nullable=True),
        sa.Column("last_error_code", sa.String(64), nullable=True),
        sa.Column("last_error_message", sa.String(500), nullable=True),
    )
    op.create_index(
        "ix_saved_searches_api_key_id_status", "saved_searches", ["api_key_id", "status"]
    )
    op.create_table(
        "saved_search_identities",
        sa.Column("saved_search_id", sa.String(36), primary_key=True),
        sa.Column("jurisdiction", sa.String(64), primary_key=True),
        sa.Column("permit_number", sa.String(64), primary_key=True),
        sa.Column("first_seen_at", TS, nullable=False),
        sa.Column("last_seen_at", TS, nullable=False),
    )
    op.create_index(
        "ix_saved_search_identities_last_seen_at",
        "saved_search_identities",
        ["saved_search_id", "last_seen_at"],
    )
    op.create_table(
        "permit_created_identities",
        sa.Column("jurisdiction", sa.String(64), primary_key=True),
        sa.Column("permit_number", sa.String(64), primary_key=True),
        sa.Column("first_observed_at", TS, nullable=False),
        sa.Column("last_observed_at", TS, nullable=False),
    )
    op.create_index(
        "ix_permit_created_identities_last_observed_at",
        "permit_created_identities",
        ["last_observed_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_permit_created_identities_last_observed_at", "permit_created_identities")
    op.drop_table("permit_created_identities")
    op.drop_index("ix_saved_search_identities_last_seen_at", "saved_search_identities")
    op.drop_table("saved_search_identities")
    op.drop_index("ix_saved_searches_api_key_id_status", "saved_searches")
    op.drop_table("saved_searches")
    op.drop_table("job_leases")
