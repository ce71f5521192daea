"""A part of a source with a circuit of its own (EPIC-LA's EnerGov pages are the source
"epicla:energov") is paced by its source's policy: before this, its requests found no policy
and went out with none, unpaced."""

from __future__ import annotations

from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy

PACED = SourcePolicy(requests_per_second=3.0, burst=2)
DEFAULT = SourcePolicy()
OWN = SourcePolicy(max_attempts=2)


async def test_a_sub_source_owes_its_sources_politeness() -> None:
    http = PortalHttp(
        portal_base_url=None,
        policies={"epicla": PACED, "aca": PACED, "aca:sandiego": OWN},
        default_policy=DEFAULT,
    )
    try:
        assert http.policy("epicla:energov") is PACED
        assert http.policy("epicla") is PACED
        # Accela slugs contain ':' themselves and are found as they are.
        assert http.policy("aca:sandiego") is OWN
        assert http.policy("unknown:part") is DEFAULT
    finally:
        await http.aclose()
