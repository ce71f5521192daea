"""The text an agent reads beside a detail tool's structured answer."""

from __future__ import annotations

from permitapi.mcp import render


def _history(**extra: object) -> dict[str, object]:
    return {
        "permit_number": "BLD24-00123",
        "jurisdiction": "aca:sandiego",
        "observed": False,
        "timeline": [],
        "workflow": [],
        **extra,
    }


def test_history_the_portal_could_not_give_says_why() -> None:
    why = "the Processing Status request failed: GetProcessingData did not answer JSON"
    text = render.history(_history(unavailable_reason=why))
    assert f"could not give the history on the latest fetch: {why}" in text
    assert "not proof there is none" not in text


def test_history_never_observed_is_not_called_absent() -> None:
    text = render.history(_history(unavailable_reason=None))
    assert "no history detail (not proof there is none)" in text
