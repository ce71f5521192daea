"""Tables: requests for jurisdictions the service does not cover yet."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from permitapi.db.base import Base, UTCDateTime


class JurisdictionRequest(Base):
    """One requested jurisdiction, keyed by its normalised name and state."""

    __tablename__ = "jurisdiction_requests"
    __table_args__ = (UniqueConstraint("name_key", "state_code"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name_key: Mapped[str] = mapped_column(String(200))
    jurisdiction_name: Mapped[str] = mapped_column(String(200))
    state_code: Mapped[str] = mapped_column(String(2))
    request_count: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20), default="open")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class JurisdictionRequestVote(Base):
    """One authenticated key's vote; the unique pair makes a repeat vote a no-op."""

    __tablename__ = "jurisdiction_request_votes"
    __table_args__ = (UniqueConstraint("request_id", "api_key_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("jurisdiction_requests.id"))
    api_key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class JurisdictionRequestAddressVote(Base):
    """One keyless client's vote, by a keyed hash of its address (never the address itself);
    the unique pair makes a repeat from the same address a no-op."""

    __tablename__ = "jurisdiction_request_address_votes"
    __table_args__ = (UniqueConstraint("request_id", "address_hash"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("jurisdiction_requests.id"))
    address_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
