"""Tables: stored responses of idempotent requests."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class IdempotentRequest(Base):
    __tablename__ = "idempotent_requests"
    __table_args__ = (UniqueConstraint("scope", "idempotency_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # Who may replay: a hash of the API key, or the client address for anonymous callers.
    scope: Mapped[str] = mapped_column(String(80))
    idempotency_key: Mapped[str] = mapped_column(String(255))
    request_fingerprint: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(12))  # processing | completed
    # Random per claim: only the request that holds the claim may complete or abandon it, even
    # after its lock expired and another request took the row over.
    lock_token: Mapped[str] = mapped_column(String(32))
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_headers: Mapped[str | None] = mapped_column(Text, nullable=True)
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    locked_until: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
