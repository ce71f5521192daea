"""The playground in a real browser: headless Debian Chromium driven by Playwright against a
real `permitapi dev` server types a permit number and reads the rendered status (keyless: the
anonymous demo)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

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
    expect(page.locator("#error")).to_contain_text("Candidates:")
    page.get_by_role("button", name="Look up hello (unknown format)").click()
    expect(page.locator("#error")).to_contain_text("404 jurisdiction_not_supported")
