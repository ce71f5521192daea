"""The service's Prometheus metrics, on a registry of its own.

Counters and histograms are module-level so that any layer (the request middleware, the
source gateway, the delivery engine, the problem renderer) records without holding the app;
gauges that describe shared state (queue depth, circuit states) are computed when /metrics is
scraped, from the database and the circuit breakers (shared through Redis when configured, else
the process's own), so they are never stale.

Each process has its own counters (one scrape target per process, the usual Prometheus
model); the queue gauges read the shared database, so any process reports the same values.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY: Final = CollectorRegistry(auto_describe=True)

# Buckets around the service's targets: a cached lookup well under 25 ms, a live fetch in
# seconds, a portal that hangs until its 30 s read timeout.
LATENCY_BUCKETS: Final = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip

HTTP_REQUESTS: Final = Counter(
    "permitapi_http_requests",
    "HTTP requests answered, by route template, method and status code.",
    ("route", "method", "status"),
    registry=REGISTRY,
)
HTTP_LATENCY: Final = Histogram(
    "permitapi_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and method.",
    ("route", "method"),
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
PORTAL_FETCHES: Final = Counter(
    "permitapi_portal_fetches",
    "Portal reads (lookups, batches, searches), by source and outcome.",
    ("source", "operation", "outcome"),
    registry=REGISTRY,
)
QUERY_DEFECTS: Final = Counter(
    "permitapi_query_build_defects",
    "Portal queries that could not be built from validated criteria, by source: a defect of "
    "ours, never counted as a portal failure.",
    ("source",),
    registry=REGISTRY,
)
MCP_TOOL_CALLS: Final = Counter(
    "permitapi_mcp_tool_calls",
    "MCP tools/call requests, by tool and outcome (ok, or the error result's problem code; "
    "tool 'unknown' for names tools/list does not have).",
    ("tool", "outcome"),
    registry=REGISTRY,
)
REFUSALS: Final = Counter(
    "permitapi_refusals",
    "Requests refused by a meter or a window (429), by problem code.",
    ("code",),
    registry=REGISTRY,
)
DELIVERY_OUTCOMES: Final = Counter(
    "permitapi_webhook_delivery_attempts",
    "Webhook delivery attempts, by outcome (delivered, retry, dead, disabled, refused).",
    ("outcome",),
    registry=REGISTRY,
)
CIRCUIT_STATE: Final = Gauge(
    "permitapi_circuit_state",
    "Circuit breaker state per source (shared through Redis when configured, else this "
    "process's): 0 closed, 1 half-open, 2 open.",
    ("source",),
    registry=REGISTRY,
)
QUEUE_DEPTH: Final = Gauge(
    "permitapi_job_queue_depth",
    "Jobs due now and not yet done, per job kind (shared database).",
    ("kind",),
    registry=REGISTRY,
)
QUEUE_OLDEST_AGE: Final = Gauge(
    "permitapi_job_oldest_due_age_seconds",
    "Age of the oldest due job per kind, 0 when none is due (shared database).",
    ("kind",),
    registry=REGISTRY,
)
DEPENDENCY_UP: Final = Gauge(
    "permitapi_dependency_up",
    "Whether a dependency answered at the last scrape, per dependency (database; redis when "
    "PERMITAPI_REDIS_URL is set): 1 up, 0 down.",
    ("dependency",),
    registry=REGISTRY,
)
