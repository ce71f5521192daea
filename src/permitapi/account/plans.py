"""Plans and every limit of the service, in one place that every check reads.

The numbers are the contract's Limits table. `None` as a limit means "no fixed number": only
Enterprise uses it (its lookup credits are set per contract, see `Account.custom_lookup_limit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from enum import StrEnum


class PlanName(StrEnum):
    FREE = "free"
    DEVELOPER = "developer"
    PRO = "pro"
    ENTERPRISE = "enterprise"


class Meter(StrEnum):
    LOOKUP = "lookup"
    DISCOVERY = "discovery"


@dataclass(frozen=True, slots=True)
class Plan:
    name: PlanName
    paid: bool
    monthly_lookup_credits: int | None
    burst_per_minute: int
    force_refresh: bool
    active_webhooks: int
    active_watches: int
    discovery_searches_per_month: int
    active_saved_searches: int
    lookup_overage_usd: Decimal | None
    discovery_overage_usd: Decimal | None
    price_usd_per_month: Decimal | None
    discovery_addon_usd_per_month: Decimal | None


PLANS: dict[PlanName, Plan] = {
    PlanName.FREE: Plan(
        name=PlanName.FREE,
        paid=False,
        monthly_lookup_credits=200,
        burst_per_minute=3,
        force_refresh=False,
        active_webhooks=1,
        active_watches=1,
        discovery_searches_per_month=5,
        active_saved_searches=0,
        lookup_overage_usd=None,
        discovery_overage_usd=None,
        price_usd_per_month=Decimal("0"),
        discovery_addon_usd_per_month=None,
    ),
    PlanName.DEVELOPER: Plan(
        name=PlanName.DEVELOPER,
        paid=True,
        monthly_lookup_credits=5_000,
        burst_per_minute=60,
        force_refresh=True,
        active_webhooks=5,
        active_watches=10,
        discovery_searches_per_month=400,
        active_saved_searches=3,
        lookup_overage_usd=Decimal("0.01"),
        discovery_overage_usd=Decimal("0.25"),
        price_usd_per_month=Decimal("49"),
        discovery_addon_usd_per_month=Decimal("39"),
    ),
    PlanName.PRO: Plan(
        name=PlanName.PRO,
        paid=True,
        monthly_lookup_credits=25_000,
        burst_per_minute=120,
        force_refresh=True,
        active_webhooks=10,
        active_watches=50,
        discovery_searches_per_month=1_500,
        active_saved_searches=10,
        lookup_overage_usd=Decimal("0.008"),
        discovery_overage_usd=Decimal("0.20"),
        price_usd_per_month=Decimal("149"),
        discovery_addon_usd_per_month=Decimal("99"),
    ),
    PlanName.ENTERPRISE: Plan(
        name=PlanName.ENTERPRISE,
        paid=True,
        monthly_lookup_credits=None,
        burst_per_minute=600,
        force_refresh=True,
        active_webhooks=25,
        active_watches=250,
        discovery_searches_per_month=10_000,
        active_saved_searches=50,
        lookup_overage_usd=None,  # contract terms
        discovery_overage_usd=None,
        price_usd_per_month=None,
        discovery_addon_usd_per_month=None,
    ),
}

# An Enterprise account without a contract figure recorded gets this many lookup credits.
ENTERPRISE_DEFAULT_LOOKUP_CREDITS = 100_000
# Without the discovery add-on every key still has the free allowance of searches.
FREE_DISCOVERY_ALLOWANCE = PLANS[PlanName.FREE].discovery_searches_per_month

LOOKUP_COST = 1
FORCE_REFRESH_COST = 10
FORCE_REFRESH_PER_HOUR = 10
BATCH_MAX_PERMITS = 25
PARCELS_PER_SEARCH_MAX = 25
TOOL_BATCH_MAX = 25

CACHE_LIFETIME = timedelta(hours=4)
DISCOVERY_CURSOR_LIFETIME = timedelta(minutes=15)
IDEMPOTENT_RESPONSE_RETENTION = timedelta(hours=24)
SECRET_ROTATION_OVERLAP = timedelta(hours=24)
EVENTS_RETENTION = timedelta(days=30)
COVERAGE_SAMPLE_WINDOW = timedelta(days=90)
SAVED_SEARCH_BASELINE_MAX = 100


def plan_named(name: str) -> Plan:
    return PLANS[PlanName(name)]


def monthly_limit(
    plan: Plan, meter: Meter, *, discovery_addon: bool, custom_lookup_limit: int | None
) -> int:
    """The included units of a meter for one month."""
    if meter is Meter.LOOKUP:
        if plan.monthly_lookup_credits is None:
            return custom_lookup_limit or ENTERPRISE_DEFAULT_LOOKUP_CREDITS
        return plan.monthly_lookup_credits
    if discovery_addon:
        return plan.discovery_searches_per_month
    return FREE_DISCOVERY_ALLOWANCE


def overage_allowed(
    plan: Plan, meter: Meter, *, overage_enabled: bool, discovery_addon: bool
) -> bool:
    """Whether usage may go past the included units, accruing overage units.

    Free keys always stop at the limit. Lookup overage needs a paid plan; discovery overage
    needs a paid plan and the add-on.
    """
    if not overage_enabled or not plan.paid:
        return False
    if meter is Meter.DISCOVERY:
        return discovery_addon
    return True
