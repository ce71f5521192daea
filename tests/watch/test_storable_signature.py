"""Change signatures as stored in watched_permits.change_signature (VARCHAR(400)): short ones
unchanged, long ones (an Accela probe lists every completed inspection) cut to their status
text plus a digest of the whole, so that they fit and every change is still told apart."""

from __future__ import annotations

from permitapi.watch.jobs import SIGNATURE_MAX, storable_signature


def test_a_signature_that_fits_is_kept_as_it_is() -> None:
    short = "Issued|2026-11-02|Framing:Passed"
    assert storable_signature(short) == short
    exact = "x" * SIGNATURE_MAX
    assert storable_signature(exact) == exact


def test_a_long_signature_fits_keeps_its_status_and_tells_changes_apart() -> None:
    inspections = "|".join(f"Inspection {n}:Passed:2026-0{1 + n % 9}-1{n % 10}" for n in range(40))
    long = f"Issued|{inspections}"
    stored = storable_signature(long)
    assert len(stored) <= SIGNATURE_MAX
    assert stored.startswith("Issued|sha256:")
    one_more = storable_signature(long + "|Final:Passed:2026-11-20")
    assert one_more != stored
    assert storable_signature(long) == stored  # stable: the same input, the same stored form
