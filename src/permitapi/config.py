"""Settings, read from the environment with the PERMITAPI_ prefix.

One object holds every setting; each group below belongs to one concern. Secrets that still hold
their placeholder make `permitapi serve` refuse to start (see `Settings.placeholder_secrets`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRET = "insecure-placeholder-secret-change-me"  # noqa: S105
# The shortest secret key `serve` accepts: it signs cursors and webhook payload secrets, and an
# HMAC-SHA256 key shorter than the digest is guessable sooner than the digest itself.
MIN_SECRET_KEY_BYTES = 32
DEFAULT_SQLITE_PATH = Path("var") / "permitapi.db"

Environment = Literal["production", "development", "test"]


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


class Settings(BaseSettings):
    # "null" in the environment is None for the optional settings (e.g. PERMITAPI_GC_THRESHOLDS).
    model_config = SettingsConfigDict(
        env_prefix="PERMITAPI_", extra="ignore", env_parse_none_str="null"
    )

    # -- runtime mode -------------------------------------------------------------------------
    environment: Environment = "production"

    # -- storage ------------------------------------------------------------------------------
    database_url: str = sqlite_url(DEFAULT_SQLITE_PATH)
    database_pool_size: int = Field(default=20, ge=1, le=200)
    redis_url: str | None = None
    # Prefix of every key the service keeps in Redis, so that several deployments (or parallel
    # test runs) can share one Redis without sharing windows.
    redis_namespace: str = Field(default="permitapi", min_length=1, max_length=64)

    # -- secrets ------------------------------------------------------------------------------
    secret_key: SecretStr = SecretStr(PLACEHOLDER_SECRET)

    # -- outbound: where the portal adapters send requests ------------------------------------
    # When set, every jurisdiction's portal is reached at this base URL (the portal simulator);
    # when unset, adapters use each jurisdiction's real portal hosts from the directory.
    portal_base_url: str | None = None
    # Defaults of every source's HTTP policy (permitapi.sources.http_policy.SourcePolicy); tests set
    # short timeouts here. Per-source overrides, keyed by jurisdiction slug or platform, as
    # JSON: PERMITAPI_SOURCE_POLICIES='{"aca": {"read_timeout": 45}, "ladbs": {...}}'.
    source_connect_timeout_seconds: float = Field(default=5.0, gt=0)
    source_read_timeout_seconds: float = Field(default=30.0, gt=0)
    source_max_attempts: int = Field(default=3, ge=1, le=6)
    source_policies: dict[str, dict[str, float]] = Field(default_factory=dict)

    # -- browser-backed fetching (permitapi.sources.browser) -----------------------------------
    # Record pages only script fills are read in headless Chromium (Playwright, the optional
    # `permitapi[browser]` extra): at most `browser_pages` pages open per process, each read
    # cut off after `browser_page_timeout_seconds`. `browser_executable`: the Chromium binary
    # (default: chromium on PATH). An "auto" jurisdiction whose page needed script is read by
    # the browser for `browser_remember_seconds` before HTTP is tried again.
    browser_enabled: bool = True
    browser_pages: int = Field(default=2, ge=1, le=32)
    browser_page_timeout_seconds: float = Field(default=30.0, gt=0)
    browser_executable: str | None = None
    browser_remember_seconds: float = Field(default=3600.0, gt=0)
    # The worker's daily drift canary (`sources-canary`; `permitapi sources canary` on demand):
    # known public records read from the portals, the verdict shown on /developers/status.json.
    canary_daily: bool = False

    # -- webhooks -----------------------------------------------------------------------------
    # Accept http:// receivers on loopback (`permitapi dev` and tests only; `serve` refuses it).
    allow_loopback_webhooks: bool = False
    # How often an idle worker looks for due deliveries: the bound on an event's wait for its
    # first attempt (the claim is one indexed query).
    delivery_poll_interval_seconds: float = Field(default=0.2, gt=0)
    # How long a worker owns a webhook's deliveries; a killed worker's are attempted again by
    # another worker after this.
    delivery_lease_seconds: float = Field(default=120.0, gt=0)

    # -- requests -----------------------------------------------------------------------------
    # The largest request body accepted, in bytes (web/body_limit.py): larger ones are refused
    # with 413 payload_too_large while they stream in, before authentication or parsing.
    max_request_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=1024 * 1024 * 1024)

    # -- anonymous demo -----------------------------------------------------------------------
    # Keyless calls (status, batch) served from the curated dataset, per client address over a
    # rolling 24 hours; shared across processes through Redis when PERMITAPI_REDIS_URL is set.
    demo_calls_per_day: int = Field(default=30, ge=1, le=10_000)
    # Keyless POST /jurisdictions/request calls per client address over a rolling 24 hours
    # (jurisdiction/anonymous.py); shared through Redis like the demo's cap.
    anonymous_jurisdiction_requests_per_day: int = Field(default=10, ge=1, le=10_000)
    # Peers whose X-Forwarded-For is believed (reverse proxies), as IP addresses or CIDR
    # networks, JSON: PERMITAPI_TRUSTED_PROXIES='["10.0.0.0/8"]'. Default: none.
    trusted_proxies: list[str] = Field(default_factory=list)

    # -- remote tool server (MCP, /mcp) -----------------------------------------------------
    # DNS-rebinding protection: the Host header values (and browser Origin values) /mcp answers;
    # anything else gets 421 (Host) or 403 (Origin). `:*` allows any port. A deployment lists its
    # public host name, e.g. PERMITAPI_MCP_ALLOWED_HOSTS='["api.example.com"]' and
    # PERMITAPI_MCP_ALLOWED_ORIGINS='["https://api.example.com"]'. A request without Origin
    # (every non-browser client) is checked on Host alone.
    mcp_allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    )
    mcp_allowed_origins: list[str] = Field(
        default_factory=lambda: ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    )

    # -- worker -------------------------------------------------------------------------------
    run_worker_in_process: bool = False
    worker_poll_interval_seconds: float = Field(default=0.5, gt=0)
    # How long a worker owns a claimed operation; a worker that dies loses it after this.
    operation_lease_seconds: float = Field(default=120.0, gt=0)
    # How long one process owns a permit's refresh (cross-process single flight); longer than
    # one fetch with its bounded retries, so a live holder is never overtaken.
    refresh_lease_seconds: float = Field(default=90.0, gt=0)
    # A fresh cache hit of GET status reserves and reads on the raw driver
    # (permit/lookup/fast/path.py). Off, every lookup takes the normal path: the two must answer
    # alike byte for byte (tests/permit/lookup/fast/test_fast_path_equivalence.py), so this is
    # for comparison and diagnosis.
    fast_path: bool = True

    # -- observability ------------------------------------------------------------------------
    # json: one JSON object per log line (production default); text: readable lines (the
    # default under `dev` and in tests). Either way every line carries the request id.
    log_format: Literal["json", "text"] | None = None
    log_level: str = "INFO"
    # One line per request (request id, method, route template, status, latency, key id; never
    # the key) from the logger permitapi.access. Off by default: the request metrics already
    # count every request.
    access_log: bool = False
    # When set, GET /metrics needs `Authorization: Bearer <token>`; unset, it is public (put it
    # behind the deployment's private network).
    metrics_token: SecretStr | None = None

    # -- process --------------------------------------------------------------------------------
    # Garbage-collector thresholds of a server process (permitapi.kit.gc_tuning), as JSON:
    # PERMITAPI_GC_THRESHOLDS='[50000, 20, 100]'; null keeps CPython's defaults (700, 10, 10).
    gc_thresholds: tuple[int, int, int] | None = (50_000, 20, 100)

    @property
    def effective_log_format(self) -> Literal["json", "text"]:
        if self.log_format is not None:
            return self.log_format
        return "json" if self.environment == "production" else "text"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def short_secrets(self) -> list[str]:
        """Names of secret settings shorter than MIN_SECRET_KEY_BYTES (UTF-8 bytes)."""
        secret = self.secret_key.get_secret_value().encode()
        return ["PERMITAPI_SECRET_KEY"] if len(secret) < MIN_SECRET_KEY_BYTES else []

    def placeholder_secrets(self) -> list[str]:
        """Names of secret settings that still hold their insecure placeholder value."""
        names = []
        if self.secret_key.get_secret_value() == PLACEHOLDER_SECRET:
            names.append("PERMITAPI_SECRET_KEY")
        return names


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
