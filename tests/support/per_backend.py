"""One value per database backend for the whole test session, made on first use.

pytest keeps a single instance of a parametrised session fixture: when the next test asks for
the other backend it tears the first down. In one process pytest orders the tests so that this
happens once; under pytest-xdist's `--dist loadscope` a worker runs a module's SQLite tests and
then its PostgreSQL tests, module after module, so a parametrised fixture that owned a
database would migrate a new one at every module. The parametrised fixture
asks this pool instead, which keeps each backend's value until the session ends.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from typing import Generic, TypeVar

T = TypeVar("T")


class PerBackend(Generic[T]):
    def __init__(self, make: Callable[[str], AbstractContextManager[T]]) -> None:
        self._make = make
        self._made: dict[str, T] = {}
        self._stack = ExitStack()

    def get(self, backend: str) -> T:
        if backend not in self._made:
            self._made[backend] = self._stack.enter_context(self._make(backend))
        return self._made[backend]

    def close(self) -> None:
        self._stack.close()
