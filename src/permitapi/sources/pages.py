"""Page classifiers: recognise pages that are not data before a parser reads them.

Portals answer many failures with HTTP 200 and an HTML page: LADBS's "Service not available at
this time", Accela's `Error.aspx`, a `Login.aspx` wall, a CSRF refusal, a CAPTCHA. Parsing such a
page as "no rows" would turn an outage into a false "not found", so adapters call
`classify_page` on every HTML body (PortalHttp does it for redirects and, when asked, for
bodies) and `require_markers` to insist the page is the one they expected.

Outcomes:
    maintenance / service-unavailable text  -> RetryLater(reason="maintenance")
    Accela Error.aspx (URL or page)          -> RetryLater(reason="portal_error"), or Blocked when
                                                the error page is a CSRF refusal
    Login.aspx / a login panel               -> Blocked
    CSRF refusal text                         -> Blocked
    CAPTCHA challenge                         -> Blocked
    firewall "Access Denied" page             -> Blocked
    none of the expected markers              -> PortalChanged ("unexpected page")
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from permitapi.sources.base import Blocked, PortalChanged, RetryLater

MAINTENANCE_RETRY_AFTER = 300.0
PORTAL_ERROR_RETRY_AFTER = 120.0

_MAINTENANCE = re.compile(
    r"service (?:is )?not available at this time"
    r"|temporarily unavailable"
    r"|(?:down|offline) for (?:scheduled )?maintenance"
    r"|under (?:scheduled )?maintenance"
    r"|scheduled maintenance (?:is|in) (?:in )?progress"
    r"|site maintenance",
    re.IGNORECASE,
)
_CSRF = re.compile(
    r"potential cross-site request forgery|referer and origin headers are missing",
    re.IGNORECASE,
)
_CAPTCHA = re.compile(
    r"g-recaptcha|hcaptcha|cf-turnstile|/recaptcha/api|captcha-container"
    r"|verify (?:that )?you are (?:a )?human|are you a robot",
    re.IGNORECASE,
)
# A web-application-firewall refusal (Akamai-style "Access Denied"): a bot wall, not throttling,
# so retrying soon would only prolong it.
_WAF = re.compile(
    r"<title>\s*access denied\s*</title>|you don't have permission to access", re.IGNORECASE
)
# A login wall, not a page that merely links to a login: a form posting to Login.aspx, Accela's
# login panel iframe or its ACA_Login container.
_LOGIN = re.compile(
    r"<form[^>]*action=\"[^\"]*login\.aspx"
    r"|id=\"loginframe\""
    r"|/communityview/login-panel"
    r"|class=\"[^\"]*\baca_login\b",
    re.IGNORECASE,
)
_ERROR_PAGE = re.compile(
    r"<form[^>]*action=\"[^\"]*error\.aspx|<title>\s*(?:[^<]*[-|:]\s*)?error\b", re.IGNORECASE
)


def _path(url: str | None) -> str:
    return urlsplit(url).path.lower() if url else ""


def classify_url(source: str, url: str | None) -> None:
    """Raise for a URL (a redirect target or a final URL) that is a wall or an error page."""
    path = _path(url)
    if path.endswith("/login.aspx") or path == "login.aspx":
        raise Blocked(source, f"redirected to a login page ({url})")
    if path.endswith("/error.aspx") or path == "error.aspx":
        raise RetryLater(
            source,
            f"portal error page ({url})",
            retry_after=PORTAL_ERROR_RETRY_AFTER,
            reason="portal_error",
        )


def classify_page(source: str, body: str, *, url: str | None = None) -> None:
    """Raise the typed error for a page that is not data; return quietly for anything else.

    Order matters: a CSRF refusal rendered on Error.aspx is a Blocked (retrying the same request
    gets the same refusal), and walls outrank maintenance wording that may appear in a footer.
    """
    if _CSRF.search(body):
        raise Blocked(source, "the portal refused the request as cross-site request forgery")
    if _CAPTCHA.search(body):
        raise Blocked(source, "the portal answered with a CAPTCHA challenge")
    if _LOGIN.search(body):
        raise Blocked(source, "the portal answered with a login page")
    if _WAF.search(body):
        raise Blocked(source, "the portal's firewall refused the request (Access Denied)")
    classify_url(source, url)
    if _ERROR_PAGE.search(body):
        raise RetryLater(
            source,
            "the portal answered with its error page",
            retry_after=PORTAL_ERROR_RETRY_AFTER,
            reason="portal_error",
        )
    if _MAINTENANCE.search(body):
        raise RetryLater(
            source,
            "the portal answered with a maintenance page",
            retry_after=MAINTENANCE_RETRY_AFTER,
            reason="maintenance",
        )


def require_markers(source: str, body: str, markers: Iterable[str], *, expected: str) -> None:
    """Raise PortalChanged unless the body contains at least one marker (case-insensitive).

    For the page an adapter asked for (a detail page, a result grid): anything else is an
    "unexpected page", never an empty result.
    """
    lowered = body.casefold()
    wanted = list(markers)
    if not any(marker.casefold() in lowered for marker in wanted):
        raise PortalChanged(
            source, f"unexpected page: expected {expected} (none of {wanted!r} present)"
        )
