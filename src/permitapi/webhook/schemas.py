"""API shapes of the webhook endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from permitapi.event.service import EVENT_TYPES

EventName = Literal[
    "status_change",
    "inspection_complete",
    "permit_approved",
    "permit_denied",
    "corrections_required",
    "operation_completed",
    "criteria_match",
    "permit_created",
]
assert set(EventName.__args__) == set(EVENT_TYPES)  # type: ignore[attr-defined]

DisabledReason = Literal["deleted", "deactivated", "gone", "failures"]

_URL = Field(
    description="https URL without credentials whose host resolves only to public addresses "
    "(`permitapi dev` also accepts http:// on loopback)",
    min_length=1,
    max_length=2048,
    examples=["https://example.com/permit-hooks"],
)
_EVENTS = Field(
    description="Event names to receive; at least one. Unknown names are refused (400).",
    min_length=1,
    max_length=32,
)
_FILTER = Field(
    default=None,
    description="Jurisdiction slugs (GET /jurisdictions); events of other jurisdictions are not "
    "delivered. Absent or null: every jurisdiction. Events without a jurisdiction always pass.",
    max_length=100,
)


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = _URL
    events: list[str] = _EVENTS
    jurisdiction_filter: list[str] | None = _FILTER


class WebhookUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(default=None, min_length=1, max_length=2048)
    events: list[str] | None = Field(default=None, min_length=1, max_length=32)
    jurisdiction_filter: list[str] | None = Field(default=None, max_length=100)
    is_active: bool | None = Field(
        default=None,
        description="false pauses deliveries (pending ones become dead, replayable later); true "
        "re-activates a paused or automatically disabled webhook and resets its failure count",
    )


class WebhookOut(BaseModel):
    webhook_id: str
    url: str
    events: list[str]
    jurisdiction_filter: list[str] | None
    is_active: bool
    disabled_reason: DisabledReason | None = Field(
        description="Why an inactive webhook is inactive: deleted (DELETE, final), deactivated "
        "(PATCH is_active false), gone (the receiver answered 410), failures (repeated failed "
        "deliveries); null if active"
    )
    deleted_at: datetime | None = Field(
        default=None,
        description="When DELETE deactivated the webhook for good (it stays listed, its "
        "deliveries readable; changing it is 409 webhook_deleted); null otherwise",
    )
    created_at: datetime
    last_triggered_at: datetime | None = Field(description="Last delivery attempt (any outcome)")
    consecutive_failures: int = Field(
        description="Failed delivery attempts since the last acknowledged one"
    )


class WebhookCreated(WebhookOut):
    secret: str = Field(description="`whsec_` + base64 of 32 random bytes; shown only now")
    warning: str


class WebhookList(BaseModel):
    webhooks: list[WebhookOut]


class WebhookDeleted(BaseModel):
    status: Literal["deactivated"]
    webhook_id: str


class DeliveryOut(BaseModel):
    id: str = Field(description="The delivery_id (the webhook-id header)")
    event_id: str
    event_type: str
    status: Literal["pending", "delivered", "dead"]
    attempts: int
    payload: str = Field(description="The exact signed body sent (UTF-8 JSON text)")
    last_error: str | None
    last_status_code: int | None = Field(description="HTTP status of the last attempt, if any")
    replay_of: str | None = Field(description="The delivery this one replays, if a replay")
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None = Field(description="null when no attempt is scheduled")


class DeliveryList(BaseModel):
    webhook_id: str
    deliveries: list[DeliveryOut]


class ReplayAccepted(BaseModel):
    """The new pending delivery; its first attempt is made at once by the worker."""

    status: Literal["pending"]
    webhook_id: str
    replay_of: str
    delivery: DeliveryOut


class SecretRotated(BaseModel):
    webhook_id: str
    secret: str
    previous_secret_valid_until: datetime
    warning: str


class TestResult(BaseModel):
    success: bool
    status_code: int | None = Field(description="null on a transport failure")
    error: str | None


class SimulateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event: EventName = "status_change"


class SimulatedDelivery(BaseModel):
    status_code: int = Field(description="The receiver's status; 0 on a transport failure")
    body_preview: str | None = Field(
        default=None, description="First 500 characters of the receiver's answer"
    )
    error: str | None = Field(default=None, description="Why no answer was received")


class SimulateResult(BaseModel):
    ok: bool = Field(description="Always true: the simulation ran; see delivery.status_code")
    delivery: SimulatedDelivery
