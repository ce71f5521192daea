"""Fresh request ids: unique, in the documented shape, and distinct across processes (a forked
child draws its own prefix, so two workers forked from one parent never share ids)."""

from __future__ import annotations

import os
import re

from permitapi.web.request_context import accept_request_id

SHAPE = re.compile(r"^req_[0-9a-f]{32}$")


def test_fresh_ids_are_unique_and_shaped_like_before() -> None:
    ids = [accept_request_id(None) for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(SHAPE.fullmatch(value) for value in ids)
    assert accept_request_id(ids[0]) == ids[0]  # valid ids sent by a client are kept


def test_a_forked_child_does_not_repeat_the_parents_ids() -> None:
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(writing, accept_request_id(None).encode())
        os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    from_child = os.read(reading, 100).decode()
    os.close(reading)
    parent = accept_request_id(None)
    assert SHAPE.fullmatch(from_child)
    assert from_child[4:20] != parent[4:20]  # a different per-process prefix
