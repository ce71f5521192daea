"""The `permitapi` operator command. Every command honours PERMITAPI_DATABASE_URL, so the CLI
and a running server share state."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
import uvicorn
from sqlalchemy.engine.url import make_url

from permitapi import dev_state
from permitapi.account import key_invalidation
from permitapi.account import repository as account_rows
from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.config import DEFAULT_SQLITE_PATH, MIN_SECRET_KEY_BYTES, Settings, sqlite_url
from permitapi.db import migrate
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.errors import ApiError
from permitapi.kit.clock import SystemClock
from permitapi.portalsim.app import DEFAULT_SEED, create_sim_app
from permitapi.sources.canary.command import sources_app
from permitapi.telemetry import logs
from permitapi.watch.jobs import WatchCheck
from permitapi.worker import progress
from permitapi.worker.daily_pass import DailyPass

# The app, composition (every job source) and the worker runner are imported by the commands
# that run them: importing them costs about two seconds, which every other command (keys, db,
# --help) and every CLI call of the test suite would pay. cli.py is the top layer, so these
# imports dodge no circle.

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, rich_markup_mode=None)
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
log = logging.getLogger("permitapi.cli")


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


def _shown_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _settings_beside_dev(*, show: bool = False) -> Settings:
    """Settings, taking the database and the portal simulator of a `permitapi dev` running in
    this directory where the environment sets neither (permitapi.dev_state). With `show`, or
    when the dev server's were taken, says on stderr which were used."""
    chosen = dev_state.choose(os.environ)
    settings = Settings().model_copy(update=chosen.overrides)
    if show or chosen.overrides:
        url = _shown_url(settings.database_url)
        typer.echo(f"database: {url} ({chosen.database_origin})", err=True)
    if show:
        portals = settings.portal_base_url or "the real portal hosts"
        typer.echo(f"portals: {portals} ({chosen.portals_origin})", err=True)
    return settings


def _run(settings: Settings, work: Any) -> Any:
    try:
        return asyncio.run(_with_session(settings, work))
    except ApiError as exc:
        _fail(exc.detail)


@db_app.command("upgrade")
def db_upgrade(
    revision: Annotated[str, typer.Argument(help="Target revision")] = "head",
) -> None:
    """Apply Alembic migrations up to REVISION (default: head)."""
    settings = _settings_beside_dev()
    migrate.upgrade(settings.database_url, revision)
    typer.echo(f"database at {revision}")


@db_app.command("current")
def db_current() -> None:
    """The database's migration revision; exits 1 when it is behind the code's head."""
    settings = _settings_beside_dev()
    current = migrate.current_revision(settings.database_url)
    head = migrate.head_revision()
    if current == head:
        typer.echo(f"database at {current} (head)")
        return
    typer.echo(f"database at {current or 'no revision'}; head is {head}")
    _fail("the database is behind the code: run `permitapi db upgrade`")


@keys_app.command("create")
def keys_create(
    plan: Annotated[PlanName, typer.Option(help="free, developer, pro or enterprise")],
    discovery_addon: Annotated[
        bool, typer.Option("--discovery-addon", help="Enable the discovery add-on")
    ] = False,
    overage: Annotated[
        bool, typer.Option("--overage", help="Allow paid overage past the plan's limit")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Create an account with a live key (sk_live_…) and a sandbox key (sk_test_…)."""
    settings = _settings_beside_dev()
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


@keys_app.command("list")
def keys_list(
    account: Annotated[
        str | None, typer.Option("--account", help="Only this account's keys")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array")] = False,
) -> None:
    """Every key: its id, account, plan, kind, state and display prefix (never the key)."""
    settings = _settings_beside_dev()

    async def work(session: Any) -> list[account_rows.KeyListing]:
        return await account_rows.list_keys(session, account)

    rows: list[account_rows.KeyListing] = _run(settings, work)
    listed = [
        {
            "key_id": row.api_key_id,
            "account_id": row.account_id,
            "plan": row.plan,
            "kind": "sandbox" if row.is_sandbox else "live",
            "state": "active" if row.is_active else "deactivated",
            "prefix": row.display_prefix,
            "created_at": row.created_at.isoformat(),
        }
        for row in rows
    ]
    _print_rows(listed, as_json, ("key_id", "account_id", "plan", "kind", "state", "prefix"))


@accounts_app.command("list")
def accounts_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array")] = False,
) -> None:
    """Every account: its id, plan, add-on and overage flags, and number of active keys."""
    settings = _settings_beside_dev()

    async def work(session: Any) -> list[account_rows.AccountListing]:
        return await account_rows.list_accounts(session)

    rows: list[account_rows.AccountListing] = _run(settings, work)
    listed = [
        {
            "account_id": row.account_id,
            "plan": row.plan,
            "discovery_addon": row.discovery_addon,
            "overage": row.overage_enabled,
            "active_keys": row.active_keys,
            "created_at": row.created_at.isoformat(),
        }
        for row in rows
    ]
    columns = ("account_id", "plan", "discovery_addon", "overage", "active_keys")
    _print_rows(listed, as_json, columns)


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _print_rows(rows: list[dict[str, Any]], as_json: bool, columns: tuple[str, ...]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = [list(columns), *([_cell(row[c]) for c in columns] for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    for line in table:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())


@keys_app.command("deactivate")
def keys_deactivate(
    key: Annotated[str, typer.Argument(help="The key (sk_live_… or sk_test_…)")],
) -> None:
    """Deactivate KEY: it is refused with 401 invalid_api_key from now on."""
    settings = _settings_beside_dev()

    async def work(session: Any) -> None:
        await accounts.deactivate_key(session, key, SystemClock().now())

    _run(settings, work)
    _announce(settings, key_invalidation.KEY_PREFIX + accounts.hash_key(key))
    typer.echo("key deactivated")


@accounts_app.command("set-plan")
def accounts_set_plan(
    account_id: Annotated[str, typer.Argument(help="The account's id")],
    plan: Annotated[PlanName, typer.Argument(help="free, developer, pro or enterprise")],
) -> None:
    """Move ACCOUNT_ID to PLAN. Existing watches and webhooks are kept."""
    settings = _settings_beside_dev()

    async def work(session: Any) -> None:
        await accounts.set_plan(session, account_id, plan)

    _run(settings, work)
    _announce(settings, key_invalidation.ACCOUNT_PREFIX + account_id)
    typer.echo(f"account {account_id} is now on {plan.value}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind")] = "0.0.0.0",  # noqa: S104 - a production server listens on all interfaces
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, help="API processes (uvicorn workers) sharing the port")
    ] = 1,
    migrate_first: Annotated[
        bool,
        typer.Option("--migrate/--no-migrate", help="Apply migrations before starting"),
    ] = True,
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
    logs.configure(settings.effective_log_format, settings.log_level)
    if workers > 1 and settings.is_sqlite:
        log.warning(SQLITE_PROCESSES_WARNING, workers)
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


SQLITE_PROCESSES_WARNING = (
    "%d API processes on SQLite: every write takes the one database lock, so the processes "
    "wait on one another; set PERMITAPI_DATABASE_URL to PostgreSQL to run more than one"
)


@app.command()
def worker() -> None:
    """Run the background job runner until SIGINT/SIGTERM."""
    from permitapi import composition
    from permitapi.worker.runner import Worker

    settings = Settings()
    logs.configure(settings.effective_log_format, settings.log_level)

    async def main() -> None:
        ctx = composition.build_context(settings)
        runner = Worker(ctx, composition.job_sources())
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
    from permitapi import composition

    typer.echo(composition.job_sources.__doc__ or "")


@jobs_app.command("run")
def jobs_run(
    name: Annotated[str, typer.Argument(help="A job source, e.g. deliveries")],
    progress_every: Annotated[
        float,
        typer.Option(
            "--progress-every",
            min=0,
            help="Seconds between progress lines when stderr is not a terminal",
        ),
    ] = 5.0,
) -> None:
    """Run one pass of one job source now: progress on stderr (a bar on a terminal, a count
    every few seconds otherwise), then a summary. Beside a running `permitapi dev` it uses that
    server's database and portal simulator unless the environment says otherwise."""
    from permitapi import composition
    from permitapi.worker.runner import Worker

    try:
        source = composition.source_named(name)
    except KeyError:
        names = ", ".join(s.name for s in composition.job_sources())
        _fail(f"unknown job source {name!r}; known: {names}")
        return
    if isinstance(source, WatchCheck):
        # Run now means every watched permit, due or not.
        source = WatchCheck(force=True)
    elif isinstance(source, DailyPass):
        # A daily pass run now even if it ran today (never while another worker runs it).
        source = type(source)(force=True)
    settings = _settings_beside_dev(show=True)
    logs.configure(settings.effective_log_format, settings.log_level)
    reporter: progress.Reporter = (
        progress.Bar(name, sys.stderr)
        if sys.stderr.isatty()
        else progress.Counts(name, sys.stderr, every=progress_every)
    )

    async def main() -> tuple[int, list[str]]:
        ctx = composition.build_context(settings)
        worker = Worker(ctx, [source])
        try:
            with progress.reporting(reporter):
                return await worker.run_once(), worker.failed
        finally:
            await worker.aclose()
            await ctx.gateway.aclose()
            await ctx.engine.dispose()

    began = time.monotonic()
    handled, failed = asyncio.run(main())
    took = f"{time.monotonic() - began:.1f} s"
    if failed:
        _fail(
            f"{name}: the pass failed (see the log above); {handled} handled before it did, "
            f"in {took}"
        )
    summary = getattr(source, "last", None)
    detail = f"; {summary.line()}" if summary is not None and hasattr(summary, "line") else ""
    typer.echo(f"{name}: {handled} handled in {took}{detail}")


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
    host: Annotated[str, typer.Option(help="Interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8000,
    seed: Annotated[int, typer.Option(help="Seed of the simulated portals")] = DEFAULT_SEED,
    latency_ms: Annotated[
        int | None, typer.Option("--latency-ms", help="Simulated portal latency (ms)")
    ] = None,
) -> None:
    """Offline development server on embedded defaults (SQLite under ./var), with the portal
    simulator mounted at /_sim and every jurisdiction pointed at it."""
    from permitapi import composition
    from permitapi.app import create_app

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
        settings, extra_lifespans=[composition.in_process_worker], mounts={SIM_PREFIX: simulator}
    )
    # For the commands run beside this server (`permitapi jobs run`): its database and simulator.
    assert settings.portal_base_url is not None
    dev_state.record(
        dev_state.DevState(settings.database_url, settings.portal_base_url, base_url, os.getpid())
    )
    try:
        uvicorn.run(
            application,
            host=host,
            port=port,
            access_log=False,
            log_config=None,
            proxy_headers=False,  # as in `serve`: only PERMITAPI_TRUSTED_PROXIES are believed
        )
    finally:
        dev_state.clear()


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
