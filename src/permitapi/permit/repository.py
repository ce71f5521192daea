"""SQL for the permits table (latest representation per permit identity): every read and write
of a permits row goes through here (status lookups, refreshes, resolutions, the canonical
resource and the detail endpoints)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Table, and_, bindparam, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from permitapi.db.base import stored_utc
from permitapi.permit.models import PermitRecord


def identity(jurisdiction: Any, permit_number: Any) -> Any:
    """The row of one permit identity (arguments may be bind parameters: the fast path compiles
    this for its raw drivers)."""
    return and_(
        PermitRecord.jurisdiction == jurisdiction, PermitRecord.permit_number == permit_number
    )


def _identities(identities: Collection[tuple[str, str]]) -> Any:
    return or_(*(identity(j, n) for j, n in sorted(set(identities))))


_PERMITS: Table = PermitRecord.__table__  # type: ignore[assignment]


# -- stored representations (resolutions, the canonical resource, the detail endpoints) ------


async def get_by_id(session: AsyncSession, permit_id: str) -> PermitRecord | None:
    result = await session.execute(select(PermitRecord).where(PermitRecord.permit_id == permit_id))
    return result.scalar_one_or_none()


async def get_by_identity(
    session: AsyncSession, jurisdiction: str, permit_number: str
) -> PermitRecord | None:
    result = await session.execute(
        select(PermitRecord).where(identity(jurisdiction, permit_number))
    )
    return result.scalar_one_or_none()


async def page_urls(
    session: AsyncSession, identities: list[tuple[str, str]]
) -> dict[str, tuple[str, str | None]]:
    """number -> (the permit page its last full read came from, its raw status), for the
    permits of `identities` that have one."""
    if not identities:
        return {}
    result = await session.execute(
        select(PermitRecord.permit_number, PermitRecord.snapshot, PermitRecord.raw_status).where(
            _identities(identities)
        )
    )
    found = {}
    for number, snapshot, raw_status in result.all():
        url = (snapshot or {}).get("source_url")
        if isinstance(url, str) and url:
            found[number] = (url, raw_status)
    return found


# -- status lookups (cache reads, refresh leases, stored representations) ----------------------
# Core statements only: these run on the hot path (design.md, "The hot path").


@dataclass(frozen=True, slots=True)
class CachedPermit:
    """What a status answer needs of a permits row, without decoding the whole snapshot."""

    permit_id: str
    jurisdiction: str
    display_number: str
    raw_status: str | None
    normalized_status: str | None
    permit_type: str | None
    address: str | None
    work_description: str | None
    fetched_at: datetime | None
    last_attempted_at: datetime | None
    last_failure_reason: str | None
    has_snapshot: bool


CACHED_COLUMNS = (
    PermitRecord.permit_id,
    PermitRecord.jurisdiction,
    PermitRecord.display_number,
    PermitRecord.raw_status,
    PermitRecord.normalized_status,
    PermitRecord.permit_type,
    PermitRecord.snapshot["address"].as_string(),
    PermitRecord.snapshot["work_description"].as_string(),
    PermitRecord.fetched_at,
    PermitRecord.last_attempted_at,
    PermitRecord.last_failure_reason,
    PermitRecord.snapshot.is_not(None),
)
"""The cache row's projection, for the normal path's reads and compiled for the fast path's
raw drivers (permit/lookup/fast/repository.py): one projection, read back by `cached_permit`."""


def cached_permit(values: Sequence[Any]) -> CachedPermit | None:
    """A row of `CACHED_COLUMNS` (None: no row, or a left join that found none). Raw drivers
    bypass the column types: SQLite hands back ISO strings and integer booleans."""
    if values[0] is None:
        return None
    return CachedPermit(
        permit_id=values[0],
        jurisdiction=values[1],
        display_number=values[2],
        raw_status=values[3],
        normalized_status=values[4],
        permit_type=values[5],
        address=values[6],
        work_description=values[7],
        fetched_at=stored_utc(values[8]),
        last_attempted_at=stored_utc(values[9]),
        last_failure_reason=values[10],
        has_snapshot=bool(values[11]),
    )


async def read_cached(
    db: AsyncSession | AsyncConnection, jurisdiction: str, permit_number: str
) -> CachedPermit | None:
    row = (
        await db.execute(select(*CACHED_COLUMNS).where(identity(jurisdiction, permit_number)))
    ).first()
    return None if row is None else cached_permit(row)


async def read_cached_many(
    db: AsyncSession, identities: list[tuple[str, str]]
) -> dict[tuple[str, str], CachedPermit]:
    """Cache rows of many (jurisdiction, number) identities in one query (batch status)."""
    if not identities:
        return {}
    result = await db.execute(
        select(PermitRecord.permit_number, *CACHED_COLUMNS).where(_identities(identities))
    )
    found = {}
    for row in result.all():
        cached = cached_permit(row[1:])
        assert cached is not None
        found[(cached.jurisdiction, row[0])] = cached
    return found


async def holding_number(db: AsyncSession, permit_numbers: list[str]) -> list[tuple[str, str]]:
    """(jurisdiction, number) of stored representations with any of these numbers."""
    result = await db.execute(
        select(PermitRecord.jurisdiction, PermitRecord.permit_number)
        .where(PermitRecord.permit_number.in_(permit_numbers), PermitRecord.snapshot.is_not(None))
        .order_by(PermitRecord.jurisdiction)
    )
    return [(j, n) for j, n in result.all()]


async def ensure_row(
    db: AsyncSession, *, permit_id: str, jurisdiction: str, permit_number: str, now: datetime
) -> None:
    """Create the identity row (no representation yet) so a refresh lease can be taken on it."""
    await ensure_rows(db, [(permit_id, jurisdiction, permit_number)], now)


def _insert(db: AsyncSession) -> Any:
    return postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert


async def ensure_rows(
    db: AsyncSession, identities: Sequence[tuple[str, str, str]], now: datetime
) -> None:
    """`ensure_row` for many (permit_id, jurisdiction, permit_number) in one statement. Rows go
    in a fixed order, so two processes inserting overlapping batches on PostgreSQL wait for
    each other instead of deadlocking."""
    if not identities:
        return
    values = [
        {
            "permit_id": pid,
            "jurisdiction": jurisdiction,
            "permit_number": number,
            "display_number": number,
            "created_at": now,
        }
        for pid, jurisdiction, number in sorted(set(identities))
    ]
    await db.execute(_insert(db)(PermitRecord).values(values).on_conflict_do_nothing())


async def claim_refresh(
    db: AsyncSession,
    jurisdiction: str,
    permit_number: str,
    owner: str,
    now: datetime,
    until: datetime,
) -> bool:
    """Take the refresh lease if nobody holds an unexpired one (the conditional UPDATE is the
    check, so two processes can never both win)."""
    result = await db.execute(
        update(PermitRecord)
        .where(
            identity(jurisdiction, permit_number),
            or_(
                PermitRecord.refresh_lease_owner.is_(None),
                PermitRecord.refresh_lease_expires_at < now,
            ),
        )
        .values(refresh_lease_owner=owner, refresh_lease_expires_at=until)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def _lease_free(now: datetime) -> Any:
    return or_(
        PermitRecord.refresh_lease_owner.is_(None), PermitRecord.refresh_lease_expires_at < now
    )


@dataclass(frozen=True, slots=True)
class Claim:
    """A refresh lease just taken, with what tells whether a fetch is still due."""

    jurisdiction: str
    permit_number: str
    fetched_at: datetime | None
    last_failure_reason: str | None


async def claim_refreshes(
    db: AsyncSession,
    identities: Collection[tuple[str, str]],
    owner: str,
    now: datetime,
    until: datetime,
) -> list[Claim]:
    """`claim_refresh` for many permits in one conditional UPDATE ... RETURNING: the leases
    taken (free or expired ones). The condition is re-checked on the row being updated, so two
    processes can never both win a permit.

    On PostgreSQL the rows are locked in a fixed order and rows another transaction has locked
    (another claim in progress) are skipped, so overlapping batches never deadlock; a skipped
    permit is simply not claimed here (the caller waits for it as for any held lease). SQLite
    has one writer at a time and ignores the locking clause.
    """
    if not identities:
        return []
    candidates = (
        select(PermitRecord.permit_id)
        .where(_identities(identities), _lease_free(now))
        .order_by(PermitRecord.permit_id)
        .with_for_update(skip_locked=True)
    )
    result = await db.execute(
        update(PermitRecord)
        .where(PermitRecord.permit_id.in_(candidates), _lease_free(now))
        .values(refresh_lease_owner=owner, refresh_lease_expires_at=until)
        .returning(
            PermitRecord.jurisdiction,
            PermitRecord.permit_number,
            PermitRecord.fetched_at,
            PermitRecord.last_failure_reason,
        )
        .execution_options(synchronize_session=False)
    )
    return [Claim(*row) for row in result.all()]


async def release_refreshes(
    db: AsyncSession, identities: Collection[tuple[str, str]], owner: str
) -> None:
    """`release_refresh` for many permits in one statement."""
    if not identities:
        return
    await db.execute(
        update(PermitRecord)
        .where(_identities(identities), PermitRecord.refresh_lease_owner == owner)
        .values(refresh_lease_owner=None, refresh_lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )


@dataclass(frozen=True, slots=True)
class RefreshState:
    lease_owner: str | None
    lease_expires_at: datetime | None
    fetched_at: datetime | None
    last_attempted_at: datetime | None
    last_failure_reason: str | None


async def refresh_state(
    db: AsyncSession, jurisdiction: str, permit_number: str
) -> RefreshState | None:
    row = (
        await db.execute(
            select(
                PermitRecord.refresh_lease_owner,
                PermitRecord.refresh_lease_expires_at,
                PermitRecord.fetched_at,
                PermitRecord.last_attempted_at,
                PermitRecord.last_failure_reason,
            ).where(identity(jurisdiction, permit_number))
        )
    ).first()
    return None if row is None else RefreshState(*row)


@dataclass(frozen=True, slots=True)
class Representation:
    """A successful fetch's values for its permits row."""

    jurisdiction: str
    permit_number: str
    display_number: str
    raw_status: str
    normalized_status: str
    status_date: date | None
    permit_type: str | None
    issued_date: date | None
    applied_date: date | None
    snapshot: dict[str, Any]
    normalization_version: str


# One UPDATE per call, executed once per permit (executemany); the SET columns come from the
# parameter keys, the permit from `_w_jurisdiction`/`_w_number`.
_UPDATE_BY_IDENTITY = update(_PERMITS).where(
    _PERMITS.c.jurisdiction == bindparam("_w_jurisdiction"),
    _PERMITS.c.permit_number == bindparam("_w_number"),
)
_LEASE_DROPPED = {"refresh_lease_owner": None, "refresh_lease_expires_at": None}


async def store_snapshots(
    db: AsyncSession, stored: Sequence[Representation], fetched_at: datetime
) -> None:
    """Replace the representations after successful fetches and drop their refresh leases."""
    if not stored:
        return
    params = []
    for item in stored:
        values = asdict(item)
        params.append(
            {
                "_w_jurisdiction": values.pop("jurisdiction"),
                "_w_number": values.pop("permit_number"),
                **values,
                "fetched_at": fetched_at,
                "last_attempted_at": fetched_at,
                "last_failure_reason": None,
                **_LEASE_DROPPED,
            }
        )
    connection = await db.connection()
    await connection.execute(_UPDATE_BY_IDENTITY, params)


async def store_failures(
    db: AsyncSession, failures: Sequence[tuple[str, str, str]], attempted_at: datetime
) -> None:
    """Record failed refreshes, (jurisdiction, permit_number, reason) each: the representations
    stay, the refresh leases are dropped."""
    if not failures:
        return
    params = [
        {
            "_w_jurisdiction": jurisdiction,
            "_w_number": number,
            "last_attempted_at": attempted_at,
            "last_failure_reason": reason,
            **_LEASE_DROPPED,
        }
        for jurisdiction, number, reason in failures
    ]
    connection = await db.connection()
    await connection.execute(_UPDATE_BY_IDENTITY, params)


async def release_refresh(
    db: AsyncSession, jurisdiction: str, permit_number: str, owner: str
) -> None:
    """Give a refresh lease back without a fetch (another process's fetch made it moot)."""
    await release_refreshes(db, [(jurisdiction, permit_number)], owner)
