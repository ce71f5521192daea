"""Garbage-collector thresholds for a server process.

CPython's defaults (700, 10, 10) collect the youngest generation every 700 net container
allocations. A server with dozens of requests in flight allocates that many within one request,
so the objects of in-flight requests survive young collections, are promoted, and soon trigger
full collections of the whole heap (about 125,000 objects after startup). Each such pass paused
the event loop for ~110 ms, stalling every in-flight request at once: the cached-lookup bench's
p99 was made of these pauses (docs/decisions.md, "Benchmarks"). Larger thresholds let request
garbage die young and make full passes rare.

What exists once the app has started (modules, routes, schemas, the context) lives as long as
the process, yet every full pass traversed it again. `apply_thresholds` also freezes it
(`gc.freeze`: moved to a permanent generation the collector skips), so a full pass walks only
what requests left behind; `restore` unfreezes it, so an app stopped in a longer-lived process
(tests start hundreds) can be collected.
"""

from __future__ import annotations

import gc

Thresholds = tuple[int, int, int]


def apply_thresholds(thresholds: Thresholds | None) -> Thresholds:
    """Set `thresholds` (None keeps the current ones); returns the thresholds in force before,
    for `restore`. No collection is forced here: in a process with a large heap (a test run
    starting hundreds of apps) a full pass at every start cost ~1.7 s each."""
    previous: Thresholds = gc.get_threshold()
    if thresholds is not None:
        gc.set_threshold(*thresholds)
        gc.freeze()
    return previous


def restore(previous: Thresholds) -> None:
    gc.set_threshold(*previous)
    gc.unfreeze()
