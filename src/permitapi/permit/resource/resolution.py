"""POST /permit-resolutions: number (+ jurisdiction) -> canonical permit_id. No portal fetch."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.identity import service as identity
from permitapi.permit.resource.schemas import Resolution
from permitapi.sources.registry import Directory


async def resolve_permit(
    session: AsyncSession,
    directory: Directory,
    permit_number: str,
    jurisdiction: str | None,
    *,
    sandbox: bool,
) -> Resolution:
    """The resolution record; raises the identity errors (400, 404, 300) unchanged.

    Sandbox keys never read stored representations, so for them `resource_available` is
    always false and `status_url` points at the (sandbox-supported) status lookup.
    """
    found, row = await identity.resolve(
        session, directory, permit_number, jurisdiction, number_location="body"
    )
    available = row is not None and not sandbox
    return Resolution(
        permit_id=found.permit_id,
        permit_number=found.permit_number,
        jurisdiction=found.jurisdiction.slug,
        jurisdiction_display=found.jurisdiction.display_name,
        confidence=found.how,
        resource_available=available,
        resource_url=identity.resource_path(found.permit_id),
        status_url=None
        if available
        else identity.permit_path(found.permit_number, "status", found.jurisdiction.slug),
    )
