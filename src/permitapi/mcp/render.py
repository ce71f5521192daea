"""Short text renderings of tool answers, for clients that show a model only `content`.

`structuredContent` is the answer; the text repeats what an agent needs to act on it in a few
lines (long lists are cut with a count of what was left out).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

MAX_LINES = 40
MAX_CANDIDATES = 10


def _lines(items: Iterable[str], total: int) -> list[str]:
    shown = list(items)[:MAX_LINES]
    if total > len(shown):
        shown.append(f"... and {total - len(shown)} more (see structuredContent)")
    return shown


def _join(*parts: str | None) -> str:
    return ", ".join(p for p in parts if p)


def _money(value: Any) -> str | None:
    return f"${value:,.0f}" if isinstance(value, int | float) else None


def status_record(body: dict[str, Any]) -> str:
    fresh = body.get("data_freshness") or {}
    stale = f"; STALE ({fresh.get('stale_reason')})" if fresh.get("is_stale") else ""
    lines = [
        f"{body['permit_number']} in {body['jurisdiction_display']} ({body['jurisdiction']}): "
        f"{body['status']} [phase {body['status_phase']}]",
        f"Type: {body.get('permit_type') or '-'}; address: {body.get('address') or '-'}",
    ]
    if body.get("work_description"):
        lines.append(f"Work: {body['work_description']}")
    lines.append(
        f"Source: {body['source']}, fetched {fresh.get('fetched_at', body['last_synced_at'])}"
        f"{stale}; permit_id {body['permit_id']}"
    )
    return "\n".join(lines)


def operation(body: dict[str, Any]) -> str:
    head = f"Operation {body['operation_id']}: {body['status']}."
    if body.get("poll_hint"):
        return f"{head} {body['poll_hint']}"
    if body.get("error"):
        error = body["error"]
        retry = "retryable" if error.get("retryable") else "not retryable"
        return f"{head} {error.get('code')}: {error.get('message')} ({retry})"
    if isinstance(body.get("result"), dict):
        result = body["result"]
        return f"{head}\n" + (problem(result) if "code" in result else status_record(result))
    return head


def permit_status(body: dict[str, Any]) -> str:
    return operation(body) if "operation_id" in body else status_record(body)


def batch(body: dict[str, Any]) -> str:
    results, errors, operations = body["results"], body["errors"], body["operations"]
    lines = [f"{len(results)} answered, {len(errors)} failed, {len(operations)} pending"]
    lines += _lines(
        (
            f"- {r['permit_number']} ({r['jurisdiction']}): {r['status']} "
            f"[phase {r['status_phase']}, {r['source']}]"
            for r in results
        ),
        len(results),
    )
    lines += _lines(
        (
            f"- {e['permit_number']}: {e['error']} ({e['status_code']}"
            + (", retryable" if e["retryable"] else "")
            + (f", try jurisdiction {e['jurisdiction_hint']}" if e["jurisdiction_hint"] else "")
            + f"): {e['message']}"
            for e in errors
        ),
        len(errors),
    )
    lines += _lines(
        (
            f"- operation {o['operation_id']} ({o['status']}): poll {o['poll_url']}"
            for o in operations
        ),
        len(operations),
    )
    return "\n".join(lines)


def jurisdictions(body: dict[str, Any]) -> str:
    items = body["jurisdictions"]
    lines = [f"{body['total']} jurisdictions (slug: name, platform, state)"]
    lines += [f"- {j['slug']}: {j['display_name']}, {j['platform']}, {j['state']}" for j in items]
    return "\n".join(lines)


def search(body: dict[str, Any]) -> str:
    hits = body["results"]
    head = f"{body['result_count']} permits"
    if body.get("partial"):
        head += " (PARTIAL: a source read was incomplete; see warnings)"
    lines = [head]
    lines += _lines(
        (
            f"- {h['permit_number']} ({h['jurisdiction']}): "
            + _join(
                h.get("status"),
                h.get("permit_type"),
                h.get("address"),
                f"issued {h['issued_date']}" if h.get("issued_date") else None,
                _money(h.get("valuation")),
            )
            for h in hits
        ),
        len(hits),
    )
    lines += [f"Warning ({w['source']}, {w['code']}): {w['message']}" for w in body["warnings"]]
    pagination = body["pagination"]
    if pagination.get("has_more"):
        lines.append(f"More results: call again with cursor={pagination['next_cursor']}")
    return "\n".join(lines)


def resolution(body: dict[str, Any]) -> str:
    line = (
        f"{body['permit_number']} in {body['jurisdiction_display']} ({body['jurisdiction']}) "
        f"is permit_id {body['permit_id']} ({body['confidence']})."
    )
    if body["resource_available"]:
        return line + " get_canonical_permit reads it."
    return line + " Nothing stored yet: get_permit_status creates the stored representation."


def canonical(body: dict[str, Any]) -> str:
    status = body["status"]
    dates = body.get("dates") or {}
    issued = (dates.get("issued") or {}).get("value")
    lines = [
        f"{body['permit_number']} in {body['jurisdiction_display']} ({body['jurisdiction']}): "
        f"{status.get('raw_value') or status['value']} (normalized {status['value']})",
        "Type: "
        + str((body.get("permit_type") or {}).get("value") or "-")
        + "; address: "
        + str((body.get("address") or {}).get("value") or "-"),
    ]
    extra = _join(
        f"issued {issued}" if issued else None,
        _money((body.get("valuation") or {}).get("value")),
        f"{body['conditions']['count']} conditions",
    )
    lines.append(f"{extra}; observed {body['observed_at']}; permit_id {body['permit_id']}")
    return "\n".join(lines)


def _not_observed(body: dict[str, Any], what: str) -> str | None:
    if body.get("observed"):
        return None
    if reason := body.get("unavailable_reason"):
        return f"The portal could not give the {what} on the latest fetch: {reason}."
    return f"The stored representation has no {what} detail (not proof there is none)."


def inspections(body: dict[str, Any]) -> str:
    done, pending = body["inspections"], body["pending"]
    rate = body.get("pass_rate")
    lines = [
        f"{body['permit_number']} ({body['jurisdiction']}): {len(done)} inspections"
        + (f", pass rate {rate:.0%}" if isinstance(rate, int | float) else "")
        + f", {len(pending)} pending"
    ]
    lines += _lines(
        ("- " + _join(i.get("date"), i["type"], i.get("result"), i.get("inspector")) for i in done),
        len(done),
    )
    lines += _lines(
        ("- pending: " + _join(p["type"], p.get("date")) for p in pending), len(pending)
    )
    lines += [line for line in [_not_observed(body, "inspection")] if line]
    return "\n".join(lines)


def conditions(body: dict[str, Any]) -> str:
    summary = body["summary"]
    items = body["items"]
    lines = [
        f"{body['permit_number']} ({body['jurisdiction']}): {summary['total']} conditions, "
        f"{summary['required']} outstanding, {summary['met']} met"
    ]
    lines += _lines(
        ("- " + _join(c["name"], c["status"], c.get("stage"), c.get("group")) for c in items),
        len(items),
    )
    lines += [line for line in [_not_observed(body, "condition")] if line]
    return "\n".join(lines)


def history(body: dict[str, Any]) -> str:
    timeline, workflow = body["timeline"], body["workflow"]
    lines = [f"{body['permit_number']} ({body['jurisdiction']}): {len(timeline)} status changes"]
    lines += _lines(
        (
            "- "
            + _join(
                e.get("changed_at"),
                e["status"],
                e.get("discipline"),
                "correction" if e.get("is_correction") else None,
                e.get("actor"),
                e.get("comment"),
            )
            for e in timeline
        ),
        len(timeline),
    )
    if workflow:
        lines.append(f"Workflow ({len(workflow)} activities):")
        lines += _lines(
            ("- " + _join(w["name"], w["status"], w.get("completed_at")) for w in workflow),
            len(workflow),
        )
    lines += [line for line in [_not_observed(body, "history")] if line]
    return "\n".join(lines)


def watch(body: dict[str, Any]) -> str:
    verb = "Now watching" if body["newly_watched"] else "Already watching"
    line = (
        f"{verb} {body['permit_number']} in {body['jurisdiction_display']} "
        f"({body['jurisdiction']}): {body['status']} [phase {body['status_phase']}], "
        f"since {body['created_at']}."
    )
    return line + (f"\n{body['warning']}" if body.get("warning") else "")


def unwatch(body: dict[str, Any]) -> str:
    return f"Stopped watching {body['permit_number']}."


def watches(body: dict[str, Any]) -> str:
    items = body["watches"]
    lines = [
        f"{body['total']} active watches; {body['remaining']} of {body['plan_limit']} slots left"
    ]
    lines += _lines(
        (
            f"- {w['permit_number']} ({w['jurisdiction']}): {w['status']}, since "
            f"{w['created_at']}"
            + (f", last event {w['last_event_at']}" if w.get("last_event_at") else "")
            for w in items
        ),
        len(items),
    )
    return "\n".join(lines)


# -- failures ----------------------------------------------------------------------------------


def problem(body: dict[str, Any]) -> str:
    lines = [f"Error {body['code']} ({body['status']}): {body['detail']}"]
    candidates = body.get("candidates") or []
    if candidates:
        lines.append("Candidates (strongest first; call again with one as jurisdiction):")
        lines += [
            f"- {c['slug']}: {c['display_name']} ({c['confidence']}, {c['reason']})"
            for c in candidates[:MAX_CANDIDATES]
        ]
        total = int(body.get("candidates_total", len(candidates)))
        if total > len(candidates):
            lines.append(f"({len(candidates)} of {total} candidates shown)")
    if body.get("did_you_mean"):
        lines.append("Did you mean: " + ", ".join(body["did_you_mean"]))
    if body.get("retry_after") is not None:
        lines.append(f"Retry after {body['retry_after']} seconds.")
    if body.get("errors"):
        lines.append("Issues: " + json.dumps(body["errors"], separators=(",", ":")))
    for key in ("next_step", "upgrade_hint", "plan_limit"):
        if body.get(key) is not None:
            lines.append(f"{key}: {body[key]}")
    return "\n".join(lines)


Renderer = Callable[[dict[str, Any]], str]
