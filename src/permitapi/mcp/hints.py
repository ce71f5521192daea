"""What a failed tool call tells an agent to do next, in tools and arguments.

The REST problems name REST paths ("GET /api/v1/jurisdictions lists the slugs", `status_url`,
`example`), which an agent holding only the tools cannot follow. A tool result keeps the REST
code and members but: its detail names tools instead of paths, path-valued members are replaced
by `next_step` (one sentence naming the tool and its arguments), and an ambiguous number's
candidates are cut to the MAX_CANDIDATES strongest with `candidates_total` (REST's 300 answers
them all: 72 for some Accela formats, about 20 KB).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

MAX_CANDIDATES: Final = 5

# (what the REST detail says, what a tool caller is told instead)
_DETAIL_REWRITES: Final = (
    ("GET /api/v1/jurisdictions lists the slugs.", "list_jurisdictions lists the slugs."),
    (" (POST /api/v1/permit-resolutions)", " (resolve_permit)"),
    (
        "repeat the request with one of them as the jurisdiction parameter.",
        "call the tool again with one of their slugs as `jurisdiction`.",
    ),
    (
        "Pass the jurisdiction parameter if you know it.",
        "Pass `jurisdiction` if you know it (list_jurisdictions lists the slugs).",
    ),
)
# Members whose value is a REST path or URL: `next_step` says it in tools.
_PATH_MEMBERS: Final = ("status_url", "example")


def tool_detail(detail: str) -> str:
    for rest, tool in _DETAIL_REWRITES:
        detail = detail.replace(rest, tool)
    return detail


def _number_args(body: dict[str, Any], arguments: Mapping[str, Any]) -> str:
    number = arguments.get("permit_number", body.get("permit_number"))
    return f"permit_number='{number}'" if isinstance(number, str) else "the same permit_number"


def next_step(
    tool: str, code: str, body: dict[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    """One sentence naming the tool to call and its arguments, or None."""
    if code == "multiple_jurisdictions":
        return (
            f"Call {tool} again with {_number_args(body, arguments)} and jurisdiction set to one "
            "candidate's slug; to rank the candidates by distance pass near='<lat>,<lon>' "
            "(get_permit_status), or pick the jurisdiction from list_jurisdictions."
        )
    if code == "invalid_jurisdiction":
        suggested = body.get("did_you_mean") or []
        if suggested:
            return (
                f"Call {tool} again with jurisdiction='{suggested[0]}' (or another of "
                "did_you_mean), or call list_jurisdictions for every slug."
            )
        return "Call list_jurisdictions for the slugs, then call this tool again."
    if code == "jurisdiction_not_supported":
        return (
            "Check the number as the portal shows it; if you know the jurisdiction, call "
            f"{tool} again with its slug as jurisdiction (list_jurisdictions)."
        )
    if code == "permit_not_found" and body.get("try_numbers"):
        numbers = ", ".join(f"'{n}'" for n in body["try_numbers"])
        return (
            f"This number is not in the {body.get('dataset', 'demo')} dataset (the portal was "
            f"not read): call {tool} with permit_number set to one of {numbers}, or call again "
            "with a live API key (Authorization: Bearer sk_live_...) for a portal read."
        )
    if code == "permit_not_found" and body.get("status_url"):
        jurisdiction = body.get("jurisdiction")
        where = f", jurisdiction='{jurisdiction}'" if isinstance(jurisdiction, str) else ""
        number = _number_args(body, arguments)
        return (
            f"Nothing is stored yet: call get_permit_status with {number}{where} first, then "
            f"{tool} again."
        )
    if code == "invalid_arguments":
        return "Fix the named arguments (tools/list has this tool's input schema) and call again."
    if code == "operation_not_found":
        return (
            "Pass an operation_id this API key received from get_permit_status or "
            "batch_permit_status."
        )
    return None


def for_tool(
    tool: str, code: str, body: dict[str, Any], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """The REST problem body reshaped for a tool caller (see the module docstring)."""
    shaped = dict(body)
    shaped["detail"] = tool_detail(str(body.get("detail", "")))
    step = next_step(tool, code, body, arguments)
    for member in _PATH_MEMBERS:
        shaped.pop(member, None)
    candidates = body.get("candidates")
    if isinstance(candidates, list) and len(candidates) > MAX_CANDIDATES:
        shaped["candidates"] = candidates[:MAX_CANDIDATES]
    if isinstance(candidates, list):
        shaped["candidates_total"] = len(candidates)
    if step is not None:
        shaped["next_step"] = step
    return shaped
