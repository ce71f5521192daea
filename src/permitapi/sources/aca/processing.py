"""The Processing Status tab: the `GetProcessingData` page method answers `{"d": "<html>"}`.

Fragment structure (research/portals.md §3.5; no real sample exists, see the fixture header):
tasks are `div.ACA_Workflow_Task` (sub-tasks nest inside their parent), each with a status
icon whose alt text says complete / in progress / not started, a name, history events
"Marked as <span>X</span> on <span>date</span> [by <span>who</span>]", and optional
"Assigned to <span>…</span>" and "Due on <span>…</span>" lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import orjson
from selectolax.lexbor import LexborNode

from permitapi.sources.aca.pages import clean, html_tree, node_text, parse_date

TASK = "ACA_Workflow_Task"


class ProcessingDataError(ValueError):
    """The page-method response is not the `{"d": "<html>"}` envelope."""


@dataclass(frozen=True, slots=True)
class TaskEvent:
    status: str
    on: date | None
    by: str | None


@dataclass(slots=True)
class ProcessingTask:
    name: str
    state: str  # "complete" | "in_progress" | "not_started" (from the icon)
    events: list[TaskEvent] = field(default_factory=list)
    assigned_to: str | None = None
    due_on: date | None = None
    parent: str | None = None  # name of the parent task for sub-tasks

    @property
    def status(self) -> str:
        """The task's current status: its latest event, else what the icon says."""
        if self.events:
            return self.events[-1].status
        return {"complete": "Complete", "in_progress": "In Progress"}.get(self.state, "Pending")

    @property
    def completed_at(self) -> date | None:
        return self.events[-1].on if self.state == "complete" and self.events else None


def fragment_from_json(body: bytes | str) -> str:
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ProcessingDataError(f"not JSON: {exc}") from exc
    if not isinstance(payload, dict) or "d" not in payload:
        raise ProcessingDataError("no 'd' member")
    fragment = payload["d"]
    if fragment is None:
        return ""
    if not isinstance(fragment, str):
        raise ProcessingDataError("'d' is not a string")
    return fragment


def _owner(node: LexborNode) -> LexborNode | None:
    """The nearest enclosing task of a node."""
    parent = node.parent
    while parent is not None:
        if TASK in (parent.attributes.get("class") or "").split():
            return parent
        parent = parent.parent
    return None


def _labelled_spans(node: LexborNode) -> dict[str, str]:
    """`Label <span>value</span>` runs keyed by the label (casefolded, spaces/NBSP collapsed).

    Real tenants emit stray spaces and NBSP around the labels ('Marked as ', ' on '), so the
    labels are compared cleaned, never verbatim.
    """
    found: dict[str, str] = {}
    label = ""
    for child in node.iter(include_text=True):
        if child.tag == "-text":
            label = clean(child.text_content).casefold()
        elif child.tag == "span":
            if label and label not in found:
                found[label] = node_text(child)
            label = ""
    return found


def _state(task: LexborNode) -> str:
    icon = task.css_first("img")
    alt = (icon.attributes.get("alt") or "").casefold() if icon is not None else ""
    if "complete" in alt:
        return "complete"
    if "progress" in alt or "active" in alt:
        return "in_progress"
    return "not_started"


def parse_processing(fragment: str) -> list[ProcessingTask]:
    """Tasks in document order, sub-tasks right after their parent."""
    if not fragment.strip():
        return []
    tree = html_tree(fragment)
    tasks: list[ProcessingTask] = []
    for node in tree.css(f"div.{TASK}"):
        title = node.css_first("span.ACA_Workflow_TaskName")
        if title is None or _owner(title) != node:
            continue
        parent = _owner(node)
        task = ProcessingTask(name=node_text(title), state=_state(node))
        if parent is not None:
            parent_title = parent.css_first("span.ACA_Workflow_TaskName")
            task.parent = node_text(parent_title) or None
        for event in node.css("div.ACA_TaskHistory"):
            if _owner(event) != node:
                continue
            spans = _labelled_spans(event)
            status = spans.get("marked as")
            if status:
                task.events.append(TaskEvent(status, parse_date(spans.get("on")), spans.get("by")))
        for line in node.css("div.ACA_TaskAssignment"):
            if _owner(line) == node:
                spans = _labelled_spans(line)
                task.assigned_to = spans.get("assigned to") or task.assigned_to
                if "due on" in spans:
                    task.due_on = parse_date(spans["due on"])
        tasks.append(task)
    return tasks
