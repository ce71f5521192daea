"""Merging per-source pages newest first, and the radius check (pure functions)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date

from permitapi.discovery.filters import DISCOVERY_SOURCES, Filters
from permitapi.sources.base import SearchHit

EARTH_RADIUS_MI = 3958.7613
_RANK = {source: index for index, source in enumerate(sorted(DISCOVERY_SOURCES))}


def distance_mi(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance (haversine)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_MI * math.asin(min(1.0, math.sqrt(a)))


def inside(filters: Filters, hit: SearchHit) -> bool:
    """Sources are asked for the circle already; this re-check drops what a source matched
    more loosely (an envelope instead of a circle). A hit without coordinates is kept: the
    source placed it in the circle and we have nothing better."""
    if filters.radius_mi is None or hit.latitude is None or hit.longitude is None:
        return True
    assert filters.latitude is not None
    assert filters.longitude is not None
    return (
        distance_mi(filters.latitude, filters.longitude, hit.latitude, hit.longitude)
        <= filters.radius_mi
    )


def order_key(issued: date | None, source: str) -> tuple[int, int, int]:
    """Newest issue date first. Not yet issued (no date) sorts after every dated permit, the
    order both sources are asked for (SoQL `DESC NULL LAST`; ArcGIS on SQL Server puts nulls
    last when descending). Equal dates: source slug order (epicla, ladbs), then each source's
    own order (kept by the merge)."""
    rank = _RANK.get(source, len(_RANK))
    if issued is None:
        return (1, 0, rank)
    return (0, -issued.toordinal(), rank)


@dataclass(frozen=True, slots=True)
class Merged:
    hits: list[SearchHit]
    consumed: dict[str, int]  # per source: how many of its hits this page used up


def merge(pages: Mapping[str, list[SearchHit]], limit: int, filters: Filters) -> Merged:
    """Up to `limit` hits newest first, each source contributing a prefix of its own list.

    A prefix per source is what makes per-source offsets a correct cursor; `heapq.merge`
    only ever takes the head of one input, so it holds even if a source's order disagrees
    with ours. Hits outside the radius are consumed without being returned.
    """

    def keyed(source: str, hits: list[SearchHit]) -> Iterator[tuple[tuple[int, int, int], str]]:
        for hit in hits:
            yield order_key(hit.issued_date, source), source

    iterators = {source: iter(hits) for source, hits in pages.items()}
    consumed = {source: 0 for source in pages}
    result: list[SearchHit] = []
    streams = [keyed(source, hits) for source, hits in pages.items()]
    for _, source in heapq.merge(*streams, key=lambda item: item[0]):
        if len(result) >= limit:
            break
        hit = next(iterators[source])
        consumed[source] += 1
        if inside(filters, hit):
            result.append(hit)
    return Merged(result, consumed)
