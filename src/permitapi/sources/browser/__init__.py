"""Browser-backed fetching: record pages read the way a person's browser reads them.

- `verdict`: the page classifier that tells a page HTTP could read from one only script fills
  (an empty shell, a script challenge) or a wall (login, CAPTCHA).
- `engine`: Playwright driving the system's Chromium; a bounded pool of pages per process, a new
  context per conversation, parser-irrelevant resources blocked, a hard timeout per page. Every
  request the page makes goes through `PortalHttp`, so politeness, pacing, the circuit breaker,
  simulator rewriting and typed errors are the HTTP path's own.
- `reader`: per jurisdiction's `fetch` ("http" | "browser" | "auto"), which path reads a record
  page, remembering for a while that HTTP met a page only script fills.

Playwright is an optional extra (`permitapi[browser]`); without it, or without a Chromium, a
process says so once and reads every page over HTTP.
"""
