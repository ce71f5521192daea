"""Pure parts of the browser path: the page classifier, the per-jurisdiction `fetch` setting and
the reader's memory; the simulator's page modes (control API validation, drift transforms)."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import httpx
import orjson
import pytest
from starlette.applications import Starlette

from permitapi.portalsim.page_modes import SHELL_PAGE, Drift, drift_html, drift_json
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.browser.verdict import PageNeed, judge_page
from permitapi.sources.registry import DIRECTORY_FILE, DirectoryError, _parse, default_directory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aca"
SCRIPTED_BODY = "<div id='root'></div><script src='/app.js'></script>"


@pytest.mark.parametrize(
    ("html", "need"),
    [
        (SHELL_PAGE, PageNeed.SHELL),
        (f"<html><body>{SCRIPTED_BODY}</body></html>", PageNeed.SHELL),
        ("<html><body><div>Retrieving Data...</div><p>Permits</p></body></html>", PageNeed.SHELL),
        (
            "<html><head><title>Just a moment...</title></head><body>"
            "<script src='/cdn-cgi/challenge-platform/x.js'></script></body></html>",
            PageNeed.CHALLENGE,
        ),
        (
            '<html><body><form action="../Login.aspx"><input name="u"></form></body></html>',
            PageNeed.BLOCKED,
        ),
        ('<html><body><div class="g-recaptcha"></div></body></html>', PageNeed.BLOCKED),
        ("<html><body><p>No scripts, little text.</p></body></html>", PageNeed.CONTENT),
        (
            "<html><head><title>Maintenance</title></head><body>Service not available at this "
            "time.<script></script></body></html>",
            PageNeed.CONTENT,  # an error page the parsers judge, not one a browser fixes
        ),
    ],
)
def test_page_classifier(html: str, need: PageNeed) -> None:
    assert judge_page(html).need is need


def test_a_record_page_is_content_and_walls_name_their_reason() -> None:
    record = (FIXTURES / "capdetail_building_more-details_HANDWRITTEN.html").read_text()
    assert judge_page(record).need is PageNeed.CONTENT
    captcha = judge_page('<div class="g-recaptcha"></div>')
    assert "CAPTCHA" in captcha.reason
    assert not captcha.needs_browser


def test_fetch_mode_defaults_and_validation() -> None:
    directory = default_directory()
    for item in directory:
        assert item.fetch == ("auto" if item.platform == "aca" else "http")
        assert item.answers_by_operation == (item.browser_backed or item.fetch != "http")
    entries = {str(entry["slug"]): entry for entry in _raw_entries()}
    accela = entries["aca:anaheim"]
    assert _parse({**accela, "fetch": "browser"}).answers_by_operation
    with pytest.raises(DirectoryError, match="fetch='sometimes'"):
        _parse({**accela, "fetch": "sometimes"})
    # Only Accela's adapter reads record pages in a browser.
    with pytest.raises(DirectoryError, match="needs a browser-capable platform"):
        _parse({**entries["ladbs"], "fetch": "auto"})
    assert _parse({**entries["ladbs"], "fetch": "http"}).fetch == "http"


def _raw_entries() -> list[dict[str, object]]:
    with DIRECTORY_FILE.open("rb") as handle:
        entries: list[dict[str, object]] = tomllib.load(handle)["jurisdiction"]
    return entries


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _AlwaysThere:
    """An engine stand-in that is started (the reader's decisions are what is tested here)."""

    async def ensure_started(self) -> bool:
        return True


async def test_auto_remembers_a_shell_for_a_while_then_tries_http_again() -> None:
    clock = _Clock()
    reader = PageReader(_AlwaysThere(), remember_seconds=60, monotonic=clock)  # type: ignore[arg-type]
    directory = default_directory()
    auto = directory.get("aca:sandiego")
    assert auto is not None
    http_only = dataclasses.replace(auto, fetch="http")
    browser = dataclasses.replace(auto, fetch="browser")
    assert not await reader.browser_first(auto)
    assert await reader.browser_first(browser)
    assert not await reader.browser_after(http_only, SHELL_PAGE)
    assert not await reader.browser_after(auto, "<html><body><p>a record</p></body></html>")
    assert await reader.browser_after(auto, SHELL_PAGE)
    assert await reader.browser_first(auto)
    clock.now = 59.9
    assert reader.remembered(auto.slug)
    clock.now = 60.0
    assert not await reader.browser_first(auto)
    assert not reader.remembered(auto.slug)


async def test_no_engine_means_http_for_every_mode() -> None:
    reader = PageReader(None)
    auto = default_directory().get("aca:sandiego")
    assert auto is not None
    assert not await reader.browser_first(dataclasses.replace(auto, fetch="browser"))
    assert not await reader.browser_after(auto, SHELL_PAGE)


def test_drift_transforms() -> None:
    page = (
        "<dl><dt>\n  Type\n</dt><dd>Electrical</dd><dt>Sub-Type</dt><dd>x</dd></dl>"
        "<table><tr><th>Date</th><th>Result</th></tr><tr><td>1/2/2026</td><td>OK</td></tr></table>"
    )
    renamed = drift_html(page, [Drift("rename_label", "Type", "Kind")])
    assert "Kind" in renamed
    assert "Sub-Type" in renamed  # only a label that starts with the text
    dropped = drift_html(page, [Drift("drop_column", "Result")])
    assert "Result" not in dropped
    assert "OK" not in dropped
    assert "1/2/2026" in dropped
    relaid = drift_html(page, [Drift("layout", "table")])
    assert "<table" not in relaid
    assert "<dl>" in relaid
    assert "<dl" not in drift_html(page, [Drift("layout", "dl")])
    rows = orjson.dumps([{"a": 1, "b": 2}])
    assert orjson.loads(drift_json(rows, [Drift("drop_column", "b")])) == [{"a": 1}]
    features = orjson.dumps({"features": [{"attributes": {"A": 1, "B": 2}}]})
    assert orjson.loads(drift_json(features, [Drift("drop_column", "A")])) == {
        "features": [{"attributes": {"B": 2}}]
    }


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ([], "invalid_json"),
        ({"source": "nowhere"}, "invalid_source"),
        ({"source": "ladbs", "extra": 1}, "invalid_field"),
        ({"source": "ladbs", "script_only": "yes"}, "invalid_script_only"),
        ({"source": "ladbs", "drift": {"kind": "layout"}}, "invalid_drift"),
        ({"source": "ladbs", "drift": [{"kind": "shuffle"}]}, "invalid_drift"),
        ({"source": "ladbs", "drift": [{"kind": "rename_label"}]}, "invalid_drift"),
        ({"source": "ladbs", "drift": [{"kind": "layout", "target": "ul"}]}, "invalid_drift"),
    ],
)
async def test_page_modes_control_rejects_bad_input(
    sim_app: Starlette, body: object, error: str
) -> None:
    transport = httpx.ASGITransport(app=sim_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
        response = await client.post("/_control/page-modes", json=body)
        assert response.status_code == 400
        assert response.json()["error"] == error
        assert (await client.get("/_control/page-modes")).json() == {
            "script_only": ["aca:sandiego"],
            "drift": {},
        }


async def test_page_modes_control_sets_and_clears(sim_app: Starlette) -> None:
    transport = httpx.ASGITransport(app=sim_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
        body = {"source": "ACA:Anaheim", "script_only": True, "drift": [{"kind": "layout"}]}
        response = await client.post("/_control/page-modes", json=body)
        assert response.status_code == 200
        assert response.json() == {
            "script_only": ["aca:anaheim", "aca:sandiego"],
            "drift": {"aca:anaheim": [{"kind": "layout", "target": "", "to": ""}]},
        }
        cleared = await client.delete("/_control/page-modes")
        assert cleared.json() == {"script_only": [], "drift": {}}
