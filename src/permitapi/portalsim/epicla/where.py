"""The subset of ArcGIS (standardized SQL) where clauses the simulated EPIC-LA layer accepts.

Supported: = <> != < <= > >=, AND, OR, NOT, parentheses, [NOT] IN (...), [NOT] LIKE with % and _,
IS [NOT] NULL, [NOT] BETWEEN x AND y, numbers, 'strings' ('' escapes a quote) and
DATE 'YYYY-MM-DD' / TIMESTAMP 'YYYY-MM-DD HH:MM:SS' literals (UTC, as ArcGIS Online reads them).
String comparisons ignore case, like the SQL Server collation behind hosted layers. Comparisons
with NULL are unknown (three-valued logic); a row matches only when the clause is true.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from typing import Any

Row = Mapping[str, Any]
Value = Callable[[Row], Any]
Predicate = Callable[[Row], bool | None]

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><=|>=|<>|!=|=|<|>)|(?P<punct>[(),]))"
)
_KEYWORDS = {"AND", "OR", "NOT", "IN", "LIKE", "IS", "NULL", "BETWEEN", "DATE", "TIMESTAMP"}


class WhereError(ValueError):
    """An invalid clause; `field` is set when the cause is an unknown field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise WhereError(f"unexpected input at {position}: {text[position : position + 20]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _comparable(left: Any, right: Any) -> tuple[Any, Any]:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold(), right.casefold()
    numbers = (int, float)
    if isinstance(left, numbers) and isinstance(right, numbers):
        return left, right
    raise WhereError(f"cannot compare {left!r} with {right!r}")


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: bool(a == b),
    "<>": lambda a, b: bool(a != b),
    "!=": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b),
    ">=": lambda a, b: bool(a >= b),
}


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


class _Parser:
    def __init__(self, text: str, fields: Collection[str]) -> None:
        self.tokens = _tokens(text)
        self.position = 0
        self.fields = {name.upper(): name for name in fields}

    # -- token helpers --------------------------------------------------------------------
    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def keyword(self, *words: str) -> bool:
        token = self.peek()
        if token and token[0] == "name" and token[1].upper() in words:
            self.position += 1
            return True
        return False

    def expect(self, value: str) -> None:
        token = self.peek()
        if token is None or token[1].upper() != value:
            raise WhereError(f"expected {value!r}")
        self.position += 1

    # -- grammar --------------------------------------------------------------------------
    def parse(self) -> Predicate:
        predicate = self.or_expr()
        if self.peek() is not None:
            raise WhereError(f"unexpected {self.peek()!r}")
        return predicate

    def or_expr(self) -> Predicate:
        parts = [self.and_expr()]
        while self.keyword("OR"):
            parts.append(self.and_expr())
        if len(parts) == 1:
            return parts[0]

        def any_of(row: Row) -> bool | None:
            values = [p(row) for p in parts]
            return True if True in values else (None if None in values else False)

        return any_of

    def and_expr(self) -> Predicate:
        parts = [self.not_expr()]
        while self.keyword("AND"):
            parts.append(self.not_expr())
        if len(parts) == 1:
            return parts[0]

        def all_of(row: Row) -> bool | None:
            values = [p(row) for p in parts]
            return False if False in values else (None if None in values else True)

        return all_of

    def not_expr(self) -> Predicate:
        if self.keyword("NOT"):
            inner = self.not_expr()
            return lambda row: _not(inner(row))
        return self.predicate()

    def predicate(self) -> Predicate:
        token = self.peek()
        if token == ("punct", "("):
            self.position += 1
            inner = self.or_expr()
            self.expect(")")
            return inner
        left = self.operand()
        negate = self.keyword("NOT")
        if self.keyword("IN"):
            return self.in_list(left, negate)
        if self.keyword("LIKE"):
            return self.like(left, negate)
        if self.keyword("BETWEEN"):
            low = self.operand()
            self.expect("AND")
            high = self.operand()
            inside = self.compare(
                self.compare_pair(left, ">=", low), self.compare_pair(left, "<=", high)
            )
            return (lambda row: _not(inside(row))) if negate else inside
        if negate:
            raise WhereError("NOT must precede IN, LIKE or BETWEEN")
        if self.keyword("IS"):
            wants_null = not self.keyword("NOT")
            self.expect("NULL")
            return lambda row: (left(row) is None) == wants_null
        token = self.peek()
        if token is None or token[0] != "op":
            raise WhereError("expected a comparison")
        self.position += 1
        return self.compare_pair(left, token[1], self.operand())

    @staticmethod
    def compare(first: Predicate, second: Predicate) -> Predicate:
        def both(row: Row) -> bool | None:
            a, b = first(row), second(row)
            return False if False in (a, b) else (None if None in (a, b) else True)

        return both

    @staticmethod
    def compare_pair(left: Value, op: str, right: Value) -> Predicate:
        compare = _COMPARE[op]

        def predicate(row: Row) -> bool | None:
            a, b = left(row), right(row)
            if a is None or b is None:
                return None
            return compare(*_comparable(a, b))

        return predicate

    def in_list(self, left: Value, negate: bool) -> Predicate:
        self.expect("(")
        items = [self.operand()]
        while self.peek() == ("punct", ","):
            self.position += 1
            items.append(self.operand())
        self.expect(")")

        def member(row: Row) -> bool | None:
            value = left(row)
            if value is None:
                return None
            found = any(
                v is not None and _comparable(value, v)[0] == _comparable(value, v)[1]
                for v in (item(row) for item in items)
            )
            return not found if negate else found

        return member

    def like(self, left: Value, negate: bool) -> Predicate:
        token = self.peek()
        if token is None or token[0] != "string":
            raise WhereError("LIKE needs a string pattern")
        self.position += 1
        raw = token[1][1:-1].replace("''", "'")
        pattern = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in raw)
        compiled = re.compile(f"^{pattern}$", re.IGNORECASE | re.DOTALL)

        def matches(row: Row) -> bool | None:
            value = left(row)
            if value is None:
                return None
            if not isinstance(value, str):
                raise WhereError("LIKE on a non-text field")
            found = compiled.match(value) is not None
            return not found if negate else found

        return matches

    def operand(self) -> Value:
        token = self.peek()
        if token is None:
            raise WhereError("unexpected end of clause")
        kind, text = token
        self.position += 1
        if kind == "string":
            literal = text[1:-1].replace("''", "'")
            return lambda row: literal
        if kind == "number":
            number = float(text) if "." in text else int(text)
            return lambda row: number
        if kind == "name" and text.upper() in ("DATE", "TIMESTAMP"):
            return self.date_literal(text.upper())
        if kind == "name" and text.upper() not in _KEYWORDS:
            name = self.fields.get(text.upper())
            if name is None:
                raise WhereError(f"Invalid field: {text}", field=text)
            return lambda row: row.get(name)
        raise WhereError(f"unexpected {text!r}")

    def date_literal(self, kind: str) -> Value:
        token = self.peek()
        if token is None or token[0] != "string":
            raise WhereError(f"{kind} needs a quoted value")
        self.position += 1
        text = token[1][1:-1]
        try:
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise WhereError(f"bad {kind} literal {text!r}") from exc
        if kind == "DATE" and len(text) != 10:
            raise WhereError(f"bad DATE literal {text!r}")
        milliseconds = int(moment.replace(tzinfo=UTC).timestamp() * 1000)
        return lambda row: milliseconds


def compile_where(text: str | None, fields: Collection[str]) -> Callable[[Row], bool]:
    """Compile a clause over `fields` (raises WhereError); the result is true-only."""
    predicate = _Parser(text or "1=1", fields).parse()
    return lambda row: predicate(row) is True
