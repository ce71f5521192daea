"""one in-flight attempt per webhook: the delivery lease lives on the webhook

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=False)


def upgrade() -> None:
    # A per-delivery lease cannot keep two workers from attempting two deliveries of one
    # webhook at once; a lease on the webhook row can (one conditional UPDATE claims it).
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_column("lease_owner")
        batch.drop_column("lease_expires_at")
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(sa.Column("delivery_lease_owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("delivery_lease_until", TS, nullable=True))
    op.create_index("ix_event_feed_created_at", "event_feed", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_event_feed_created_at", "event_feed")
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("delivery_lease_until")
        batch.drop_column("delivery_lease_owner")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("lease_expires_at", TS, nullable=True))
        batch.add_column(sa.Column("lease_owner", sa.String(64), nullable=True))
