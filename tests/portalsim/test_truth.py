"""The simulator's own status truth against the adapters' tables. The two are written
independently (portalsim.truth from the published vocabularies, the adapters' tables for
parsing), so this comparison can fail; docs/decisions.md "The simulator's own truth" records
what was compared and what was decided where the sources are ambiguous."""

from __future__ import annotations

from permitapi.portalsim import truth
from permitapi.portalsim.epicla.data import PERMIT_STATUSES, PLAN_STATUSES
from permitapi.sources.aca.status import agency_vocabulary, table_for
from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.epicla.status import EPICLA_STATUS, PLAN_MODULE, normalize_case_status
from permitapi.sources.ladbs.status import LADBS_STATUS_TABLE, LADBS_STATUSES
from permitapi.sources.registry import default_directory
from permitapi.sources.status import StatusTable


def _disagreements(ours: dict[str, N], theirs: StatusTable) -> dict[str, tuple[N, N]]:
    return {
        raw: (want, got) for raw, want in ours.items() if (got := theirs.normalize(raw)) is not want
    }


def test_every_accela_agency_means_what_the_adapter_reads() -> None:
    slugs = [j.slug for j in default_directory() if j.platform == "aca"]
    assert len(slugs) > 20
    found = {
        slug: wrong
        for slug in slugs
        if (wrong := _disagreements(truth.aca_vocabulary(slug), table_for(slug)))
    }
    assert found == {}


def test_the_adapter_knows_no_accela_label_the_simulator_does_not_publish() -> None:
    """The other direction: a label only the adapter has is one no published vocabulary
    gave it, so it must be added to the simulator's vocabulary with its meaning (or dropped)."""
    for slug in ("aca:sandiego", "aca:sbc", "aca:anaheim", "aca:ftl", "aca:kingco"):
        adapter_labels = set(agency_vocabulary(slug))
        assert adapter_labels - set(truth.aca_vocabulary(slug)) == set(), slug


def test_ladbs_tables_agree_both_ways() -> None:
    assert _disagreements(truth.LADBS, LADBS_STATUS_TABLE) == {}
    assert set(LADBS_STATUSES) == set(truth.LADBS)


def test_epicla_tables_agree_both_ways() -> None:
    assert _disagreements(truth.EPICLA, EPICLA_STATUS) == {}
    # The EPIC-LA simulator's cases: permits publish the truth's meaning (Issued/Open become
    # inspections once inspected), plan cases keep "Open" in review; the adapter agrees.
    for raw, status, _ in PERMIT_STATUSES:
        if status is not N.INSPECTIONS:
            assert truth.EPICLA[raw] is status, raw
    for raw, status, _ in PLAN_STATUSES:
        assert normalize_case_status(raw, PLAN_MODULE, None) is status, raw


def test_a_wrong_entry_on_either_side_is_caught() -> None:
    """The comparison is not vacuous: one changed meaning shows up as a disagreement."""
    tampered = dict(truth.LADBS, **{"Permit Closed": N.EXPIRED})
    assert _disagreements(tampered, LADBS_STATUS_TABLE) == {"Permit Closed": (N.EXPIRED, N.FINALED)}


def test_the_control_api_default_reads_the_simulators_own_vocabulary() -> None:
    assert truth.normalize("aca", "aca:sandiego", "  approved ") is N.APPROVED_PENDING_ISSUE
    assert truth.normalize("aca", "aca:fresno", "Approved") is N.ISSUED
    assert truth.normalize("ladbs", "ladbs", "CofO\xa0Issued") is N.OCCUPANCY
    assert truth.normalize("epicla", "epicla", "No Such Status") is N.UNKNOWN
