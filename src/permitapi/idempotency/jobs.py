"""Worker job `idempotency-purge`: delete expired idempotency rows.

Expired rows are already harmless (a claim replaces them), so this only keeps the table from
growing with keys that are never sent again. It runs at most once per
`interval` (worker.purge) per worker.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.idempotency import service
from permitapi.worker.purge import Purge


class IdempotencyPurge(Purge):
    name = "idempotency-purge"

    async def purge(self, session: AsyncSession, now: datetime) -> int:
        return await service.purge_expired(session, now)
