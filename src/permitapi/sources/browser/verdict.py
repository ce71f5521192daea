"""The page classifier of the browser path: can HTTP read this page, or does it need script?

    content    the page carries data (or an error a parser judges): HTTP got it
    shell      an empty record shell that script fills after load ("Loading...", "Retrieving
               Data...", a near-empty body whose scripts build the page)
    challenge  a script challenge ("Checking your browser..."): a browser passes it, HTTP cannot
    blocked    a login wall or a CAPTCHA: neither path gets past it (never a login attempt,
               never a solved CAPTCHA); `reason` says which

Walls are recognised by `permitapi.sources.pages.classify_page`, the HTTP path's own rules, so
both paths call the same page a wall.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from permitapi.sources.base import Blocked, SourceError
from permitapi.sources.pages import classify_page

# Visible text below this many characters, with scripts on the page, is a shell: a record page
# that carries its record is several kilobytes of text.
SHELL_TEXT_CHARS = 300

_CHALLENGE = re.compile(
    r"checking (?:if the site connection is secure|your browser)"
    r"|<title>\s*just a moment\.\.\.\s*</title>"
    r"|enable javascript and cookies to continue"
    r"|_cf_chl_opt|cf-browser-verification|/cdn-cgi/challenge-platform",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"retrieving data\.\.\.|loading record|data-script-shell", re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_INVISIBLE = re.compile(
    r"<(script|style|noscript|template)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL
)
_TAG = re.compile(r"<[^>]+>")


class PageNeed(StrEnum):
    CONTENT = "content"
    SHELL = "shell"
    CHALLENGE = "challenge"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class Verdict:
    need: PageNeed
    reason: str = ""

    @property
    def needs_browser(self) -> bool:
        return self.need in (PageNeed.SHELL, PageNeed.CHALLENGE)


def visible_text(html: str) -> str:
    return " ".join(_TAG.sub(" ", _INVISIBLE.sub(" ", html)).split())


def judge_page(html: str, *, source: str = "portal") -> Verdict:
    """What reading this page takes. Walls first: a login panel built by script is still a
    wall, and no browser should be sent to one."""
    try:
        classify_page(source, html)
    except Blocked as wall:
        return Verdict(PageNeed.BLOCKED, wall.message)
    except SourceError:
        return Verdict(PageNeed.CONTENT, "an error page the parsers judge")
    if _CHALLENGE.search(html):
        return Verdict(PageNeed.CHALLENGE, "a script challenge")
    text = visible_text(html)
    if _PLACEHOLDER.search(html) and len(text) < SHELL_TEXT_CHARS * 4:
        return Verdict(PageNeed.SHELL, "placeholders that script fills")
    if _SCRIPT.search(html) and len(text) < SHELL_TEXT_CHARS:
        return Verdict(PageNeed.SHELL, f"{len(text)} characters of text and scripts")
    return Verdict(PageNeed.CONTENT)
