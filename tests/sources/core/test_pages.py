"""Page classifiers on saved portal pages and on the failure texts the research describes."""

from __future__ import annotations

from pathlib import Path

import pytest

from permitapi.sources.base import Blocked, PortalChanged, RetryLater
from permitapi.sources.pages import classify_page, classify_url, require_markers
from tests.support.samples import samples_dir

SAMPLES = samples_dir()
KINGCO_LOGIN = SAMPLES / "aca" / "kingco_login-redirect_angular-login-panel_trimmed.html"
LADBS_SEARCH_FORM = SAMPLES / "ladbs" / "permit-inspection-report_search-form_selenium-dom.html"
LADBS_DETAIL = (
    SAMPLES / "ladbs" / "pcis-permit-detail_16041-10000-23545_electrical-permit-finaled.html"
)
ACA_RESULTS = SAMPLES / "aca" / "kingco_caphome_enforce_search-results_page-4-of-4_trimmed.html"
ACA_NO_RESULTS = SAMPLES / "aca" / "kingco_caphome_enforce_search-no-results_trimmed.html"
LADBS_ADDRESS = SAMPLES / "ladbs" / "address-results-details_13157-W-Otsego-St_selenium-dom.html"
DETAIL_MARKERS = ["Permit Application Status History", "Current Status"]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def test_accela_login_panel_is_blocked() -> None:
    with pytest.raises(Blocked, match="login"):
        classify_page("aca:kingco", read(KINGCO_LOGIN))


def test_ladbs_search_form_is_an_unexpected_page_not_a_wall_or_not_found() -> None:
    body = read(LADBS_SEARCH_FORM)
    classify_page("ladbs", body)  # neither maintenance nor a wall
    with pytest.raises(PortalChanged, match="unexpected page"):
        require_markers("ladbs", body, DETAIL_MARKERS, expected="a PCIS permit detail page")


@pytest.mark.parametrize("sample", [LADBS_DETAIL, ACA_RESULTS, ACA_NO_RESULTS, LADBS_ADDRESS])
def test_real_data_pages_pass(sample: Path) -> None:
    classify_page("any", read(sample))


def test_detail_page_has_its_markers() -> None:
    require_markers("ladbs", read(LADBS_DETAIL), DETAIL_MARKERS, expected="a detail page")


@pytest.mark.parametrize(
    ("body", "error", "reason"),
    [
        ("<html><body>Service not available at this time</body></html>", RetryLater, "maintenance"),
        ("<p>The site is down for scheduled maintenance.</p>", RetryLater, "maintenance"),
        (
            "<p>Potential cross-site request forgery attacks. The Referer and Origin headers "
            "are missing</p>",
            Blocked,
            None,
        ),
        (
            '<form action="./Error.aspx?ErrorId=1" id="aspnetForm">Potential cross-site request '
            "forgery attacks</form>",
            Blocked,
            None,
        ),
        ('<form method="post" action="./Error.aspx?ErrorId=9"></form>', RetryLater, "portal_error"),
        ("<title>Error</title><p>Sorry</p>", RetryLater, "portal_error"),
        ('<div class="g-recaptcha" data-sitekey="k"></div>', Blocked, None),
        ("<h2>Please verify you are a human</h2>", Blocked, None),
        (
            "<html><head><title>Access Denied</title></head><body><h1>Access Denied</h1>"
            "<p>You don't have permission to access this resource.</p></body></html>",
            Blocked,
            None,
        ),
    ],
)
def test_failure_pages(body: str, error: type[Exception], reason: str | None) -> None:
    with pytest.raises(error) as caught:
        classify_page("src", body)
    if reason is not None:
        assert isinstance(caught.value, RetryLater)
        assert caught.value.reason == reason


def test_urls() -> None:
    with pytest.raises(Blocked):
        classify_url("aca:x", "https://aca-prod.accela.com/X/Login.aspx?ReturnUrl=%2f")
    with pytest.raises(RetryLater):
        classify_url("aca:x", "/X/Error.aspx?ErrorId=3")
    classify_url("aca:x", "/X/Cap/CapDetail.aspx?capID1=1")
    classify_url("aca:x", None)


def test_a_page_that_only_links_to_login_is_not_blocked() -> None:
    classify_page("ladbs", '<a href="/OnlineServices/Account/Login?returnUrl=x">Login</a>')
