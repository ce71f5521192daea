"""A SQLAlchemy statement compiled once for a raw driver (asyncpg, sqlite3).

The fast path runs on the drivers themselves (permit/lookup/fast/repository.py) but must not
carry its own copy of the SQL: it compiles the very expressions the normal path executes.
Constants of those expressions (plan names, limits, JSON paths) become fixed arguments, passed
through the dialect's bind processors once here, as SQLAlchemy's execution would on every
call; the named bind parameters are filled in per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import asyncpg
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

Driver = Literal["asyncpg", "sqlite3"]


@dataclass(frozen=True, slots=True)
class RawStatement:
    sql: str
    names: tuple[str, ...]  # the positional parameters' names, in order
    fixed: Mapping[str, Any]  # values of the statement's constants, as the driver takes them

    def arguments(self, values: Mapping[str, Any]) -> list[Any]:
        """The positional arguments: `values` for the named bind parameters, the constants
        for the rest."""
        return [values[name] if name in values else self.fixed[name] for name in self.names]


def _dialect(driver: Driver) -> Dialect:
    if driver == "asyncpg":
        return asyncpg.dialect()  # type: ignore[no-untyped-call]
    return sqlite.dialect()


def compile_for(statement: ClauseElement, driver: Driver, parameters: set[str]) -> RawStatement:
    """`statement` for `driver` ($1 on asyncpg, ? on sqlite3). `parameters`: the names of its
    bind parameters without a value, to be given per call; they must need no bind processing
    (plain strings and integers), since the raw driver takes them as they are."""
    compiled = statement.compile(dialect=_dialect(driver))
    assert isinstance(compiled, SQLCompiler)
    names = tuple(compiled.positiontup or ())
    processors = compiled._bind_processors  # what SQLAlchemy's execution applies per call
    unexpected = parameters & set(processors)
    if unexpected:
        raise ValueError(f"parameters needing bind processing: {sorted(unexpected)}")
    missing = {name for name, value in compiled.params.items() if value is None} - parameters
    if missing:
        raise ValueError(f"bind parameters without a value: {sorted(missing)}")
    fixed: dict[str, Any] = {}
    for name, value in compiled.params.items():
        if name in parameters:
            continue
        process = processors.get(name)
        if process is not None and not callable(process):
            raise ValueError(f"tuple bind parameter {name} is not supported")
        fixed[name] = process(value) if process is not None else value
    return RawStatement(str(compiled), names, fixed)
