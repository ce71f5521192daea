"""The playground in a real browser: headless Debian Chromium driven by Playwright against a
real `permitapi dev` server types a permit number and reads the rendered status (keyless: the
anonymous demo; with a key: live lookups, a 202 followed to its answer, the history's dates),
and offers an ambiguous number's candidates as choices."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.acceptance.test_lookups_dev_server import SIM, fresh_permit
from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
# Chromium on a machine without internet: no background fetches that would be refused.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser() -> Iterator[Browser]:
    # Per test: Playwright's sync API keeps an event loop running while it is open, and the
    # PostgreSQL dev server fixture must start outside one.
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


def test_typing_a_number_shows_its_status(server: DevServer, page: Page) -> None:
    if not server.sqlite:
        pytest.skip("the page is the same on both engines; one browser run is enough")
    page.goto(server.base_url + "/")
    expect(page).to_have_title("permitapi playground")
    page.get_by_label("Permit number").fill("21030-20000-00256")
    page.get_by_role("button", name="Look up", exact=True).click()
    status = page.locator("#status")
    expect(status).to_contain_text("Issued")
    expect(status).to_contain_text("1234 W Sunset Blvd")
    expect(page.locator("#mode")).to_have_text("demo data")
    expect(page.locator("#inspections")).to_contain_text("Foundation")
    expect(page.locator("#history")).to_contain_text("Permit issued")
    expect(page.locator("#curl")).to_contain_text(
        f"curl -i '{server.base_url}/api/v1/permits/21030-20000-00256/status'"
    )
    expect(page.locator("#raw")).to_contain_text("x-demo-mode: true")


def test_example_buttons_and_problems_render(server: DevServer, page: Page) -> None:
    if not server.sqlite:
        pytest.skip("the page is the same on both engines; one browser run is enough")
    page.goto(server.base_url + "/playground")
    page.get_by_role("button", name="Look up BLD24-00123 (ambiguous)").click()
    expect(page.locator("#error")).to_contain_text("300 multiple_jurisdictions")
    expect(page.locator("#candidates-block")).to_be_visible()
    page.get_by_role("button", name="Look up hello (unknown format)").click()
    expect(page.locator("#error")).to_contain_text("404 jurisdiction_not_supported")
    expect(page.locator("#candidates-block")).to_be_hidden()


def _live_key(server: DevServer) -> str:
    created = server.cli("keys", "create", "--plan", "enterprise", "--json")
    assert created.returncode == 0, created.stderr
    return str(json.loads(created.stdout)["live_key"])


def _ladbs_circuit(http: httpx.Client) -> object:
    listed = http.get("/developers/status.json").json()["jurisdictions"]
    return next(j for j in listed if j["slug"] == "ladbs")["circuit_state"]


def _look_up(page: Page, number: str, jurisdiction: str = "", key: str = "") -> None:
    page.get_by_label("Permit number").fill(number)
    page.get_by_label("Jurisdiction (optional)").fill(jurisdiction)
    page.get_by_label("API key (optional)").fill(key)
    page.get_by_role("button", name="Look up", exact=True).click()


def test_ambiguous_candidates_are_choices_that_look_up_again(server: DevServer, page: Page) -> None:
    if not server.sqlite:
        pytest.skip("the page is the same on both engines; one browser run is enough")
    page.goto(server.base_url + "/")
    _look_up(page, "BLD24-00123")
    choices = page.locator("#candidates button")
    expect(choices.first).to_be_visible()
    assert choices.count() > 5
    first = choices.first.text_content() or ""
    slug = first.rsplit("(", 1)[1].rstrip(")")
    choices.first.click()
    expect(page.get_by_label("Jurisdiction (optional)")).to_have_value(slug)
    # Looked up again in that jurisdiction: the demo has no such permit, and says so.
    expect(page.locator("#error")).to_contain_text("404 permit_not_found")
    expect(page.locator("#error")).to_contain_text("not in the demo dataset")
    expect(page.locator("#candidates-block")).to_be_hidden()


def test_a_202_is_polled_with_progress_until_the_answer(server: DevServer, page: Page) -> None:
    if not server.sqlite:
        pytest.skip("the page is the same on both engines; one browser run is enough")
    key = _live_key(server)
    with httpx.Client(base_url=server.base_url, timeout=60) as http:
        number = fresh_permit(http, "aca:sandiego")  # not cached: an Accela read is a 202
    page.goto(server.base_url + "/")
    _look_up(page, number, "aca:sandiego", key)
    expect(page.locator("#progress")).to_contain_text("Operation ")
    expect(page.locator("#progress")).to_contain_text("succeeded", timeout=60_000)
    expect(page.locator("#status")).to_contain_text(number)
    expect(page.locator("#mode")).to_have_text("live")
    expect(page.locator("#raw")).to_contain_text("HTTP 202")
    expect(page.locator("#error-section")).to_be_hidden()


def test_history_rows_show_their_dates_with_a_key(server: DevServer, page: Page) -> None:
    if not server.sqlite:
        pytest.skip("the page is the same on both engines; one browser run is enough")
    key = _live_key(server)
    with httpx.Client(base_url=server.base_url, timeout=60) as http:
        number = fresh_permit(http, "ladbs")
        timeline = {
            "timeline": [
                {"status": "Submitted", "changed_at": "1901-01-01"},
                {"status": "Issued", "changed_at": "1901-02-15"},
            ]
        }
        assert http.put(f"{SIM}/permits/ladbs/{number}", json=timeline).status_code == 200
        # The LADBS outage test of test_lookups_dev_server (same dev server) can leave LADBS's
        # circuit open: wait out its cooldown, or this lookup is a 503 with no history.
        deadline = time.monotonic() + 120
        while _ladbs_circuit(http) == "open" and time.monotonic() < deadline:
            time.sleep(1)
    page.goto(server.base_url + "/")
    _look_up(page, number, "", key)
    history = page.locator("#history")
    expect(history).to_contain_text("1901-02-15")
    expect(history).to_contain_text("Issued")
    expect(history.locator("tr").first).to_contain_text("1901-01-01")
    expect(history).not_to_contain_text("—")
