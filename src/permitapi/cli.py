"""The `permitapi` operator command. Every command honours PERMITAPI_DATABASE_URL, so the CLI
and a running server share state."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import uvicorn

from permitapi.account import key_invalidation
from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.config import DEFAULT_SQLITE_PATH, MIN_SECRET_KEY_BYTES, Settings, sqlite_url
from permitapi.db import migrate
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.errors import ApiError
from permitapi.kit.clock import SystemClock
from permitapi.observability import logs
from permitapi.permit_created.monitor import PermitCreatedMonitor
from permitapi.portalsim.app import DEFAULT_SEED, create_sim_app
from permitapi.saved_search.jobs import SavedSearchEvaluations
from permitapi.source_health.canary_job import CanaryPass
from permitapi.sources.canary.command import sources_app
from permitapi.watch.check import WatchCheck

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
db_app = typer.Typer(no_args_is_help=True, help="Database migrations.")
keys_app = typer.Typer(no_args_is_help=True, help="API keys.")
accounts_app = typer.Typer(no_args_is_help=True, help="Accounts.")
app.add_typer(db_app, name="db")
app.add_typer(keys_app, name="keys")
app.add_typer(accounts_app, name="accounts")
jobs_app = typer.Typer(no_args_is_help=True, help="Background jobs (what the worker runs).")
app.add_typer(jobs_app, name="jobs")
app.add_typer(sources_app, name="sources")

DEV_KEYS_FILE = Path("var") / "dev-keys.json"


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


async def _with_session(settings: Settings, work: Any) -> Any:
    engine = create_engine(settings.database_url, pool_size=2)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            return await work(session)
    finally:
        await engine.dispose()


def _announce(settings: Settings, message: str) -> None:
    """Tell the running API processes to drop a changed key from their caches (after the
    change committed); without Redis they notice within their key-cache TTL."""
    if settings.redis_url:
        asyncio.run(
            key_invalidation.announce(settings.redis_url, settings.redis_namespace, message)
        )


def _run(settings: Settings, work: Any) -> Any:
    try:
        return asyncio.run(_with_session(settings, work))
    except ApiError as exc:
        _fail(exc.detail)


@db_app.command("upgrade")
def db_upgrade(revision: str = "head") -> None:
    """Apply Alembic migrations up to REVISION (default: head)."""
    settings = Settings()
    migrate.upgrade(settings.database_url, revision)
    typer.echo(f"database at {revision}")


@keys_app.command("create")
def keys_create(
    plan: Annotated[PlanName, typer.Option(help="free, developer, pro or enterprise")],
    discovery_addon: Annotated[bool, typer.Option("--discovery-addon")] = False,
    overage: Annotated[bool, typer.Option("--overage")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Create an account with a live key (sk_live_…) and a sandbox key (sk_test_…)."""
    settings = Settings()
    migrate.upgrade(settings.database_url)

    async def work(session: Any) -> accounts.CreatedAccount:
        return await accounts.create_account(
            session,
            plan=plan,
            discovery_addon=discovery_addon,
            overage_enabled=overage,
            now=SystemClock().now(),
        )

    created: accounts.CreatedAccount = _run(settings, work)
    payload = {
        "account_id": created.account_id,
        "plan": created.plan,
        "live_key": created.live_key,
        "sandbox_key": created.sandbox_key,
    }
    if as_json:
        sys.stdout.write(json.dumps(payload) + "\n")
        return
    for name, value in payload.items():
        typer.echo(f"{name:12} {value}")
    typer.echo("Keys are shown once; only their hashes are stored.")


@keys_app.command("deactivate")
def keys_deactivate(key: str) -> None:
    """Deactivate KEY: it is refused with 401 invalid_api_key from now on."""
    settings = Settings()

    async def work(session: Any) -> None:
        await accounts.deactivate_key(session, key, SystemClock().now())

    _run(settings, work)
    _announce(settings, key_invalidation.KEY_PREFIX + accounts.hash_key(key))
    typer.echo("key deactivated")


@accounts_app.command("set-plan")
def accounts_set_plan(account_id: str, plan: PlanName) -> None:
    """Move ACCOUNT_ID to PLAN. Existing watches and webhooks are kept."""
    settings = Settings()

    async def work(session: Any) -> None:
        await accounts.set_plan(session, account_id, plan)

    _run(settings, work)
    _announce(settings, key_invalidation.ACCOUNT_PREFIX + account_id)
    typer.echo(f"account {account_id} is now on {plan.value}")


@app.command()
def serve(
    host: str = "0.0.0.0",  # noqa: S104 - a production server listens on all interfaces
    port: int = 8000,
    workers: int = 1,
    migrate_first: Annotated[bool, typer.Option("--migrate/--no-migrate")] = True,
) -> None:
    """Production server. Refuses to start while a secret holds its placeholder or is shorter
    than 32 bytes."""
    settings = Settings()
    missing = settings.placeholder_secrets()
    if missing:
        _fail(f"refusing to start: set {', '.join(missing)} to a real secret", code=2)
    short = settings.short_secrets()
    if short:
        _fail(
            f"refusing to start: {', '.join(short)} must be at least {MIN_SECRET_KEY_BYTES} "
            "bytes (e.g. the output of `openssl rand -hex 32`)",
            code=2,
        )
    if settings.allow_loopback_webhooks:
        _fail("refusing to start: PERMITAPI_ALLOW_LOOPBACK_WEBHOOKS is for dev and tests", code=2)
    if migrate_first:
        migrate.upgrade(settings.database_url)
    uvicorn.run(
        "permitapi.app:create_served_app",
        factory=True,
        log_config=None,
        host=host,
        port=port,
        workers=workers,
        access_log=False,
        # The client address is ours to derive (demo/client_address.py, from
        # PERMITAPI_TRUSTED_PROXIES only): uvicorn's own rewrite would believe X-Forwarded-For
        # from any loopback peer.
        proxy_headers=False,
    )


@app.command()
def worker() -> None:
    """Run the background job runner until SIGINT/SIGTERM."""
    from permitapi.app import build_context
    from permitapi.worker.runner import Worker

    settings = Settings()
    logs.configure(settings.effective_log_format, settings.log_level)

    async def main() -> None:
        ctx = build_context(settings)
        runner = Worker(ctx)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, runner.stop)
        try:
            await runner.run_forever()
        finally:
            await ctx.gateway.aclose()
            await ctx.engine.dispose()

    asyncio.run(main())


@jobs_app.command("list")
def jobs_list() -> None:
    """Every job source and schedule the worker runs."""
    from permitapi.worker import runner

    typer.echo(runner.job_sources.__doc__ or "")


@jobs_app.command("run")
def jobs_run(name: Annotated[str, typer.Argument(help="A job source, e.g. deliveries")]) -> None:
    """Run one pass of one job source now and print how many jobs it handled."""
    from permitapi.app import build_context
    from permitapi.worker import runner

    try:
        source = runner.source_named(name)
    except KeyError:
        names = ", ".join(s.name for s in runner.job_sources())
        _fail(f"unknown job source {name!r}; known: {names}")
        return
    if isinstance(source, WatchCheck):
        # Run now means every watched permit, due or not, with progress on a terminal.
        source = WatchCheck(force=True, progress=_progress_printer())
    elif isinstance(source, SavedSearchEvaluations | PermitCreatedMonitor | CanaryPass):
        # A daily pass run now even if it ran today (never while another worker runs it).
        source = type(source)(force=True)
    settings = Settings()
    logs.configure(settings.effective_log_format, settings.log_level)

    async def main() -> tuple[int, list[str]]:
        ctx = build_context(settings)
        worker = runner.Worker(ctx, [source])
        try:
            return await worker.run_once(), worker.failed
        finally:
            await worker.aclose()
            await ctx.gateway.aclose()
            await ctx.engine.dispose()

    handled, failed = asyncio.run(main())
    if sys.stderr.isatty():
        typer.echo("", err=True)
    if failed:
        _fail(f"{name}: the pass failed (see the log above); {handled} handled before it did")
    summary = getattr(source, "last", None)
    detail = f" ({summary.line()})" if summary is not None and hasattr(summary, "line") else ""
    typer.echo(f"{name}: {handled} handled{detail}")


def _progress_printer() -> Any:
    """A one-line counter on stderr when it is a terminal; nothing otherwise."""
    if not sys.stderr.isatty():
        return None

    def show(done: int) -> None:
        typer.echo(f"\r  {done} checked", err=True, nl=False)

    return show


SIM_PREFIX = "/_sim"


def dev_settings(host: str, port: int) -> Settings:
    """Dev settings: every jurisdiction's portal is the simulator mounted at /_sim."""
    overrides: dict[str, Any] = {
        "environment": "development",
        "run_worker_in_process": True,
        "allow_loopback_webhooks": True,
        "portal_base_url": f"http://{host}:{port}{SIM_PREFIX}",
    }
    if not os.environ.get("PERMITAPI_DATABASE_URL"):
        overrides["database_url"] = sqlite_url(DEFAULT_SQLITE_PATH)
    return Settings(**overrides)


def ensure_dev_keys(settings: Settings) -> dict[str, dict[str, str]]:
    """A free and a pro account for local use, created once and remembered in var/."""

    async def existing_are_valid(keys: dict[str, dict[str, str]]) -> bool:
        engine = create_engine(settings.database_url, pool_size=1)
        try:
            async with create_sessionmaker(engine)() as session:
                for account in keys.values():
                    if await accounts.resolve_key(session, account["live_key"]) is None:
                        return False
            return True
        finally:
            await engine.dispose()

    if DEV_KEYS_FILE.exists():
        keys: dict[str, dict[str, str]] = json.loads(DEV_KEYS_FILE.read_text())
        if asyncio.run(existing_are_valid(keys)):
            return keys

    async def create(session: Any) -> dict[str, dict[str, str]]:
        made: dict[str, dict[str, str]] = {}
        for plan, addon in ((PlanName.FREE, False), (PlanName.PRO, True)):
            created = await accounts.create_account(
                session,
                plan=plan,
                discovery_addon=addon,
                overage_enabled=False,
                now=SystemClock().now(),
            )
            made[plan.value] = {
                "account_id": created.account_id,
                "live_key": created.live_key,
                "sandbox_key": created.sandbox_key,
            }
        return made

    keys = _run(settings, create)
    DEV_KEYS_FILE.parent.mkdir(parents=True, exist_ok=True)
    DEV_KEYS_FILE.write_text(json.dumps(keys, indent=2))
    DEV_KEYS_FILE.chmod(0o600)
    return keys


@app.command()
def dev(
    host: str = "127.0.0.1",
    port: int = 8000,
    seed: Annotated[int, typer.Option(help="Seed of the simulated portals")] = DEFAULT_SEED,
    latency_ms: Annotated[
        int | None, typer.Option("--latency-ms", help="Simulated portal latency (ms)")
    ] = None,
) -> None:
    """Offline development server on embedded defaults (SQLite under ./var), with the portal
    simulator mounted at /_sim and every jurisdiction pointed at it."""
    from permitapi.app import create_app
    from permitapi.worker.runner import in_process_worker

    settings = dev_settings(host, port)
    logs.configure(settings.effective_log_format, settings.log_level)
    migrate.upgrade(settings.database_url)
    keys = ensure_dev_keys(settings)
    base_url = f"http://{host}:{port}"
    typer.echo(f"permitapi dev server: {base_url}  (docs: {base_url}/docs)")
    typer.echo(f"database: {settings.database_url}")
    for plan, account in keys.items():
        typer.echo(f"{plan:5} account {account['account_id']}")
        typer.echo(f"      live key    {account['live_key']}")
        typer.echo(f"      sandbox key {account['sandbox_key']}")
    typer.echo(f"portal simulator: {settings.portal_base_url}  (control: {SIM_PREFIX}/_control)")
    simulator = create_sim_app(seed=seed, latency_ms=latency_ms)
    application = create_app(
        settings, extra_lifespans=[in_process_worker], mounts={SIM_PREFIX: simulator}
    )
    uvicorn.run(
        application,
        host=host,
        port=port,
        access_log=False,
        log_config=None,
        proxy_headers=False,  # as in `serve`: only PERMITAPI_TRUSTED_PROXIES are believed
    )


@app.command("portal-sim")
def portal_sim(
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8900,
    host: Annotated[str, typer.Option(help="Interface to bind")] = "127.0.0.1",
    seed: Annotated[int, typer.Option(help="Seed of the generated data set")] = DEFAULT_SEED,
    latency_ms: Annotated[
        int | None, typer.Option("--latency-ms", help="Latency for every family (ms)")
    ] = None,
    script_only: Annotated[
        list[str] | None,
        typer.Option("--script-only", help="A jurisdiction whose record pages need script"),
    ] = None,
) -> None:
    """Run the portal simulator alone (control API under /_control)."""
    simulator = create_sim_app(seed=seed, latency_ms=latency_ms, script_only=script_only or ())
    skipped = simulator.state.skipped_families
    typer.echo(f"portal simulator: http://{host}:{port}  (control: /_control)")
    if skipped:
        typer.echo(f"families not available yet: {', '.join(sorted(skipped))}")
    uvicorn.run(simulator, host=host, port=port, access_log=False, log_level="info")


def main() -> None:
    app()
