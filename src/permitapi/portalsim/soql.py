"""A small SoQL engine for the simulated Socrata endpoints (data.lacity.org `/resource/`).

Supports what the LADBS adapter and common clients send: `$where` with = != <> < <= > >=,
AND / OR / NOT, parentheses, `in(...)`, `IS [NOT] NULL`, `within_circle(col, lat, lon, metres)`
(haversine), `::number` casts; `$select` with columns, aliases, `max(col)`, `min(col)` and
`count(*)`; `$order` (ASC/DESC, optional `NULL FIRST`/`NULL LAST`; by default nulls sort as
the largest value, as in PostgreSQL); `$limit`, `$offset`; and simple equality parameters
(`permit_nbr=...`). Rows hold Socrata's wire values: strings, and GeoJSON points for location
columns; absent keys are nulls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

Row = Mapping[str, Any]
_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<op><=|>=|!=|<>|::|[=<>(),*])"
    r"|(?P<name>:?[A-Za-z_][A-Za-z0-9_]*))"
)
_FLOATING = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?$")
EARTH_RADIUS_M = 6_371_008.8


class SoqlError(ValueError):
    """A query Socrata would refuse with HTTP 400."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise SoqlError("query.compiler.malformed", f"Unexpected character at {position}")
        kind = match.lastgroup or ""
        tokens.append(Token(kind, match.group(kind)))
        position = match.end()
    return tokens


Expr = Callable[[Row], Any]


class _Parser:
    def __init__(self, text: str, columns: frozenset[str]) -> None:
        self.tokens = tokenize(text)
        self.index = 0
        self.columns = columns

    # -- token helpers ----------------------------------------------------------------------
    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def keyword(self, *words: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "name" and token.text.upper() in words:
            self.index += 1
            return True
        return False

    def op(self, *ops: str) -> str | None:
        token = self.peek()
        if token is not None and token.kind == "op" and token.text in ops:
            self.index += 1
            return token.text
        return None

    def expect(self, text: str) -> None:
        if self.op(text) is None:
            raise SoqlError("query.compiler.malformed", f"Expected {text!r}")

    def done(self) -> None:
        if self.peek() is not None:
            raise SoqlError("query.compiler.malformed", f"Unexpected {self.peek()!r}")

    # -- grammar ----------------------------------------------------------------------------
    def expression(self) -> Expr:
        left = self.conjunction()
        while self.keyword("OR"):
            right = self.conjunction()
            left = (lambda a, b: lambda row: bool(a(row)) or bool(b(row)))(left, right)
        return left

    def conjunction(self) -> Expr:
        left = self.negation()
        while self.keyword("AND"):
            right = self.negation()
            left = (lambda a, b: lambda row: bool(a(row)) and bool(b(row)))(left, right)
        return left

    def negation(self) -> Expr:
        if self.keyword("NOT"):
            inner = self.negation()
            return lambda row: not inner(row)
        return self.predicate()

    def predicate(self) -> Expr:
        left = self.operand()
        if self.keyword("IS"):
            negate = self.keyword("NOT")
            if not self.keyword("NULL"):
                raise SoqlError("query.compiler.malformed", "Expected NULL after IS")
            return lambda row: (left(row) is None) != negate
        negate_in = self.keyword("NOT")
        if self.keyword("IN"):
            self.expect("(")
            options = [self.operand()]
            while self.op(","):
                options.append(self.operand())
            self.expect(")")
            return _membership(left, options, negate_in)
        if negate_in:
            raise SoqlError("query.compiler.malformed", "Expected IN after NOT")
        operator = self.op("=", "!=", "<>", "<", "<=", ">", ">=")
        if operator is None:
            return left
        right = self.operand()
        return lambda row: _compare(left(row), operator, right(row))

    def operand(self) -> Expr:
        token = self.peek()
        if token is None:
            raise SoqlError("query.compiler.malformed", "Unexpected end of query")
        self.index += 1
        value: Expr
        if token.kind == "op" and token.text == "(":
            value = self.expression()
            self.expect(")")
        elif token.kind == "string":
            value = _Literal(token.text[1:-1].replace("''", "'"))
        elif token.kind == "number":
            number = float(token.text)
            value = lambda row: number  # noqa: E731
        elif token.kind == "name" and self.op("("):
            value = self.call(token.text.lower())
        elif token.kind == "name":
            value = self.column(token.text)
        else:
            raise SoqlError("query.compiler.malformed", f"Unexpected {token.text!r}")
        if self.op("::"):
            target = self.peek()
            self.index += 1
            if target is None or target.text.lower() not in ("number", "text"):
                raise SoqlError("query.compiler.malformed", "Unsupported cast")
            inner = value
            if target.text.lower() == "number":
                value = lambda row: _to_number(inner(row))  # noqa: E731
            else:
                value = lambda row: None if inner(row) is None else str(inner(row))  # noqa: E731
        return value

    def column(self, name: str) -> Expr:
        if name not in self.columns:
            raise SoqlError("query.soql.no-such-column", f"No such column: {name}")
        return lambda row: row.get(name)

    def call(self, name: str) -> Expr:
        if name == "within_circle":
            args = [self.operand()]
            while self.op(","):
                args.append(self.operand())
            self.expect(")")
            if len(args) != 4:
                raise SoqlError("query.compiler.malformed", "within_circle takes 4 arguments")
            point, lat, lon, radius = args
            return lambda row: _within(point(row), lat(row), lon(row), radius(row))
        if name in ("upper", "lower"):
            inner = self.operand()
            self.expect(")")
            fold = str.upper if name == "upper" else str.lower
            return lambda row: None if inner(row) is None else fold(str(inner(row)))
        raise SoqlError("query.soql.no-such-function", f"No such function: {name}")


class _Literal:
    """A string literal operand; `in(...)` lists made of them are matched by set lookups."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __call__(self, row: Row) -> str:
        return self.value


def _membership(left: Expr, options: list[Expr], negate: bool) -> Expr:
    """`left in(options)`: `_compare(left, "=", option)` for any option."""

    def scan(row: Row) -> bool:
        return any(_compare(left(row), "=", o(row)) for o in options) != negate

    if not all(isinstance(o, _Literal) for o in options):
        return scan
    # The same answers as `scan` without a comparison per option (a batch's inspection query
    # lists 50 spellings; scanning cost the simulator ~50 ms of CPU per query): `_compare`
    # matches two strings as timestamps when both look like one, else as text.
    values = [_comparable(o.value) for o in options if isinstance(o, _Literal)]
    as_text = {str(v) for v in values}
    texts = {v for v in values if isinstance(v, str)}
    moments = {v for v in values if isinstance(v, datetime)}

    def lookup(row: Row) -> bool:
        value = left(row)
        if value is None:
            return negate  # no match, as `scan` finds
        if not isinstance(value, str):
            return scan(row)
        value = _comparable(value)
        found = (
            value in moments or str(value) in texts
            if isinstance(value, datetime)
            else (value in as_text)
        )
        return found != negate

    return lookup


def _to_number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise SoqlError("query.execution.cast", f"Cannot cast {value!r} to number") from None


def _comparable(value: Any) -> Any:
    if isinstance(value, str) and _FLOATING.match(value):
        return datetime.fromisoformat(value)
    return value


def _compare(left: Any, operator: str, right: Any) -> bool:
    if left is None or right is None:
        return False  # SQL: comparisons with NULL are unknown, filtered out
    if isinstance(left, float) or isinstance(right, float):
        left, right = _to_number(left), _to_number(right)
    else:
        left, right = _comparable(left), _comparable(right)
        if type(left) is not type(right):
            left, right = str(left), str(right)
    match operator:
        case "=":
            return bool(left == right)
        case "!=" | "<>":
            return bool(left != right)
        case "<":
            return bool(left < right)
        case "<=":
            return bool(left <= right)
        case ">":
            return bool(left > right)
        case _:
            return bool(left >= right)


def _within(point: Any, lat: Any, lon: Any, radius: Any) -> bool:
    if not isinstance(point, Mapping):
        return False
    coords = point.get("coordinates")
    if not isinstance(coords, Sequence) or len(coords) != 2:
        return False
    return haversine_m(float(coords[1]), float(coords[0]), float(lat), float(lon)) <= float(radius)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


# -- $select / $order --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Selected:
    alias: str
    column: str | None  # None for count(*)
    aggregate: str | None  # max | min | count | None


def _parse_select(text: str, columns: frozenset[str]) -> list[_Selected]:
    selected: list[_Selected] = []
    for part in _split_commas(text):
        match = re.fullmatch(
            r"\s*(?:(?P<fn>max|min|count)\s*\(\s*(?P<arg>\*|:?\w+)\s*\)|(?P<col>:?\*|:?\w+))"
            r"(?:\s+as\s+(?P<alias>\w+))?\s*",
            part,
            re.IGNORECASE,
        )
        if match is None:
            raise SoqlError("query.compiler.malformed", f"Cannot parse $select item {part!r}")
        fn, arg, col = match.group("fn"), match.group("arg"), match.group("col")
        if fn:
            fn = fn.lower()
            if arg == "*" and fn != "count":
                raise SoqlError("query.compiler.malformed", f"{fn}(*) is not allowed")
            if arg != "*" and arg not in columns:
                raise SoqlError("query.soql.no-such-column", f"No such column: {arg}")
            default = "count" if arg == "*" else f"{fn}_{arg.lstrip(':')}"
            selected.append(
                _Selected(match.group("alias") or default, None if arg == "*" else arg, fn)
            )
        elif col in ("*", ":*"):
            selected.extend(_Selected(c, c, None) for c in sorted(columns) if not c.startswith(":"))
            if col == ":*":
                selected.extend(_Selected(c, c, None) for c in sorted(columns) if c.startswith(":"))
        else:
            if col not in columns:
                raise SoqlError("query.soql.no-such-column", f"No such column: {col}")
            selected.append(_Selected(match.group("alias") or col, col, None))
    return selected


def _split_commas(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == "(") - (char == ")")
        current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def _sort_key(value: Any, nulls_largest: bool = True) -> tuple[int, Any]:
    if value is None:
        return (1 if nulls_largest else -1, 0)
    if isinstance(value, str):
        try:
            return (0, float(value)) if re.fullmatch(r"-?\d+(\.\d+)?", value) else (0, value)
        except ValueError:  # pragma: no cover
            return (0, value)
    return (0, str(value))


def _column_key(column: str, nulls_largest: bool) -> Callable[[Row], tuple[int, Any]]:
    return lambda row: _sort_key(row.get(column), nulls_largest)


def _order(rows: list[Row], text: str, columns: frozenset[str]) -> list[Row]:
    keys: list[tuple[str, bool, bool]] = []
    for part in _split_commas(text):
        match = re.fullmatch(
            r"\s*(:?\w+)(?:\s+(asc|desc))?(?:\s+null\s+(first|last))?\s*", part, re.IGNORECASE
        )
        if match is None:
            raise SoqlError("query.compiler.malformed", f"Cannot parse $order item {part!r}")
        if match.group(1) not in columns:
            raise SoqlError("query.soql.no-such-column", f"No such column: {match.group(1)}")
        descending = (match.group(2) or "asc").lower() == "desc"
        # default: nulls are the largest value (PostgreSQL): last ascending, first descending
        placement = (match.group(3) or ("first" if descending else "last")).lower()
        nulls_largest = (placement == "last") != descending
        keys.append((match.group(1), descending, nulls_largest))
    ordered = list(rows)
    for column, descending, nulls_largest in reversed(keys):  # stable, least significant first
        ordered.sort(key=_column_key(column, nulls_largest), reverse=descending)
    return ordered


def _int_param(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not raw.strip().isdigit():
        raise SoqlError("query.compiler.malformed", f"{name} must be a non-negative integer")
    return int(raw)


def run_query(rows: Sequence[Row], params: Mapping[str, str], columns: frozenset[str]) -> list[Row]:
    """Apply a Socrata query string to `rows`; raises SoqlError for what Socrata would refuse."""
    matched: list[Row] = list(rows)
    for name, value in params.items():
        if name.startswith("$"):
            if name not in ("$where", "$select", "$order", "$limit", "$offset", "$$app_token"):
                raise SoqlError("query.compiler.malformed", f"Unsupported parameter {name}")
            continue
        if name not in columns:
            raise SoqlError("query.soql.no-such-column", f"No such column: {name}")
        matched = [r for r in matched if r.get(name) is not None and str(r.get(name)) == value]
    if params.get("$where"):
        parser = _Parser(params["$where"], columns)
        predicate = parser.expression()
        parser.done()
        matched = [r for r in matched if predicate(r)]
    selected = _parse_select(params["$select"], columns) if params.get("$select") else None
    if selected and any(s.aggregate for s in selected):
        if not all(s.aggregate for s in selected):
            raise SoqlError("query.compiler.malformed", "Mixing aggregates needs $group")
        return [_aggregate(matched, selected)]
    if params.get("$order"):
        matched = _order(matched, params["$order"], columns)
    offset = _int_param(params, "$offset", 0)
    limit = _int_param(params, "$limit", 1000)
    page = matched[offset : offset + limit]
    if selected is None:
        return [{k: v for k, v in r.items() if not k.startswith(":")} for r in page]
    return [{s.alias: r[s.column] for s in selected if s.column and s.column in r} for r in page]


def _aggregate(rows: list[Row], selected: list[_Selected]) -> Row:
    result: dict[str, Any] = {}
    for item in selected:
        if item.aggregate == "count":
            values = rows if item.column is None else [r for r in rows if r.get(item.column)]
            result[item.alias] = str(len(values))
            continue
        present = [r[item.column] for r in rows if item.column and r.get(item.column) is not None]
        if present:
            pick = max if item.aggregate == "max" else min
            result[item.alias] = pick(present, key=_sort_key)
    return result
