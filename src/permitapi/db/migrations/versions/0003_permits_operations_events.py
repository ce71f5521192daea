"""permits cache, coverage observations, operations, domain event outbox

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    op.create_table(
        "permits",
        sa.Column("permit_id", sa.String(36), primary_key=True),
        sa.Column("jurisdiction", sa.String(64), nullable=False),
        sa.Column("permit_number", sa.String(64), nullable=False),
        sa.Column("display_number", sa.String(64), nullable=False),
        sa.Column("raw_status", sa.String(200), nullable=True),
        sa.Column("normalized_status", sa.String(40), nullable=True),
        sa.Column("status_date", sa.Date(), nullable=True),
        sa.Column("permit_type", sa.String(200), nullable=True),
        sa.Column("issued_date", sa.Date(), nullable=True),
        sa.Column("applied_date", sa.Date(), nullable=True),
        sa.Column("snapshot", sa.JSON(), nullable=True),
        sa.Column("normalization_version", sa.String(40), nullable=True),
        sa.Column("fetched_at", TS, nullable=True),
        sa.Column("last_attempted_at", TS, nullable=True),
        sa.Column("last_failure_reason", sa.String(80), nullable=True),
        sa.Column("refresh_lease_owner", sa.String(64), nullable=True),
        sa.Column("refresh_lease_expires_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("jurisdiction", "permit_number"),
    )
    op.create_index("ix_permits_permit_number", "permits", ["permit_number"])
    op.create_table(
        "coverage_observations",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("jurisdiction", sa.String(64), nullable=False),
        sa.Column("fields_present", sa.JSON(), nullable=False),
        sa.Column("observed_at", TS, nullable=False),
    )
    op.create_index(
        "ix_coverage_observations_j_at", "coverage_observations", ["jurisdiction", "observed_at"]
    )
    op.create_table(
        "operations",
        sa.Column("operation_id", sa.String(36), primary_key=True),
        sa.Column("api_key_id", sa.String(36), nullable=False),
        sa.Column("operation_type", sa.String(32), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("permit_number", sa.String(64), nullable=False),
        sa.Column("jurisdiction", sa.String(64), nullable=False),
        sa.Column("force_refresh", sa.Boolean(), nullable=False),
        sa.Column("reserved_meter", sa.String(20), nullable=True),
        sa.Column("reserved_period", sa.String(7), nullable=True),
        sa.Column("reserved_units", sa.Integer(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_run_at", TS, nullable=False),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_expires_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("started_at", TS, nullable=True),
        sa.Column("completed_at", TS, nullable=True),
    )
    op.create_index("ix_operations_api_key_id", "operations", ["api_key_id"])
    op.create_index("ix_operations_status_next_run_at", "operations", ["status", "next_run_at"])
    op.create_table(
        "domain_events",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("event_id", sa.String(36), nullable=False, unique=True),
        sa.Column("event_type", sa.String(40), nullable=False),
        sa.Column("api_key_id", sa.String(36), nullable=True),
        sa.Column("permit_number", sa.String(64), nullable=True),
        sa.Column("jurisdiction", sa.String(64), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("occurred_at", TS, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_domain_events_api_key_id_seq", "domain_events", ["api_key_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_domain_events_api_key_id_seq", "domain_events")
    op.drop_table("domain_events")
    op.drop_index("ix_operations_status_next_run_at", "operations")
    op.drop_index("ix_operations_api_key_id", "operations")
    op.drop_table("operations")
    op.drop_index("ix_coverage_observations_j_at", "coverage_observations")
    op.drop_table("coverage_observations")
    op.drop_index("ix_permits_permit_number", "permits")
    op.drop_table("permits")
