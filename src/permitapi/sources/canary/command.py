"""`permitapi sources canary`: the drift canary from the command line (operators run it daily;
the worker's `sources-canary` pass runs the same check and publishes it on the status page)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from permitapi.config import Settings
from permitapi.sources.browser.reader import page_reader
from permitapi.sources.canary.check import CanaryReport, families, load_records, run_canary
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp
from permitapi.sources.policies import build_policies, default_policy
from permitapi.sources.registry import default_directory

sources_app = typer.Typer(no_args_is_help=True, help="Portal sources.")


@sources_app.command("canary")
def canary(
    family: Annotated[
        str | None, typer.Option("--family", help="Only this family (ladbs, epicla, aca)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON")] = False,
) -> None:
    """Read known public records per family from the configured portal hosts and report drift.

    Per record: reached or not, expected fields present, missing or changed shape. Exit status
    1 on drift, 2 when no record could be reached, 0 otherwise.
    """
    records = load_records()
    if family is not None and family not in families(records):
        raise typer.BadParameter(
            f"unknown family {family!r}; known: {', '.join(families(records))}",
            param_hint="--family",
        )
    report = asyncio.run(_run(Settings(), family))
    if as_json:
        typer.echo(json.dumps(report.as_json(), indent=2, default=str))
    else:
        for record in report.records:
            typer.echo(record.line())
        reached = sum(r.reached for r in report.records)
        verdict = "drift" if report.drift else ("nothing reached" if not reached else "no drift")
        typer.echo(f"{verdict}: {reached} of {len(report.records)} records reached")
    raise typer.Exit(report.exit_code)


async def _run(settings: Settings, family: str | None) -> CanaryReport:
    directory = default_directory()
    http = PortalHttp(
        portal_base_url=settings.portal_base_url,
        policies=build_policies(settings, directory),
        default_policy=default_policy(settings),
    )
    gateway = SourceGateway(http, pages=page_reader(settings, http))
    try:
        return await run_canary(gateway, directory, load_records(), family=family)
    finally:
        await gateway.aclose()
