"""Deployment files name `permitapi` commands and settings: parse them as the CLI would."""

from __future__ import annotations

from typing import Any

import typer

# typer 0.29 vendors click; its UsageError is what a refused command line raises.
from typer._click.exceptions import UsageError as UsageError

from permitapi import cli
from permitapi.config import Settings


def parse_command(args: list[str]) -> tuple[str, dict[str, Any]]:
    """The command path (e.g. `permitapi serve`) and its parsed options, as the real CLI parses
    `permitapi *args`, without running it; raises UsageError for what it would refuse."""
    command: Any = typer.main.get_command(cli.app)
    context = command.make_context("permitapi", list(args))
    while hasattr(command, "resolve_command"):
        rest = [*context._protected_args, *context.args]
        name, command, remaining = command.resolve_command(context, rest)
        context = command.make_context(name, remaining, parent=context)
    return str(context.command_path), dict(context.params)


def setting_variables() -> set[str]:
    prefix = str(Settings.model_config.get("env_prefix", "")).upper()
    return {prefix + name.upper() for name in Settings.model_fields}
