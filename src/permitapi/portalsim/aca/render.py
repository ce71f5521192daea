"""ACA markup for simulated records, modelled on the King County samples (header, grid,
pager, work location, parcel block) and on research/portals.md §3.5 where no sample exists
(More Details ASI, Record Details blocks, conditions, processing status, inspections)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date
from html import escape
from urllib.parse import urlencode

from permitapi.portalsim.aca.looks import AgencyLook
from permitapi.sources.base import PermitSnapshot, StatusEvent, WorkflowTask

GRID = "ctl00_PlaceHolderMain_dgvPermitList_gdvPermitList"
PAGER_NEXT = "ctl00$PlaceHolderMain$dgvPermitList$gdvPermitList$ctl13$ctl14"
PAGE_SIZE = 10


def e(value: object) -> str:
    return escape("" if value is None else str(value))


def mdy(value: date | None) -> str:
    return value.strftime("%m/%d/%Y") if value else "TBD"


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:6], "big")


def page(body: str, *, action: str, hidden: dict[str, str] | None = None, title: str = "") -> str:
    fields = "".join(
        f'<input type="hidden" name="{e(k)}" id="{e(k)}" value="{e(v)}"/>\n'
        for k, v in (hidden or {}).items()
    )
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        '<html dir="ltr" lang="en-US" ng-app="appAca"><head id="ctl00_Head1"><title>\n\t\n'
        f"        {e(title or 'Accela Citizen Access')}\n    \n</title></head>\n<body>\n"
        f'<form action="{e(action)}" id="aspnetForm" method="post" name="aspnetForm" '
        'onsubmit="javascript:return WebForm_OnSubmit();">\n'
        f'<div class="aspNetHidden">\n{fields}</div>\n'
        '<div class="aca_wrapper"><main id="mainContent" tabindex="-1">\n'
        f"{body}\n</main></div>\n</form>\n</body></html>"
    )


def search_form() -> str:
    return (
        '<div class="ACA_Area_CapHome"><div id="ctl00_PlaceHolderMain_generalSearchForm">'
        '<label for="txtGSPermitNumber">Record Number:</label>'
        '<input name="ctl00$PlaceHolderMain$generalSearchForm$txtGSPermitNumber" '
        'id="ctl00_PlaceHolderMain_generalSearchForm_txtGSPermitNumber" type="text"/>'
        '<input name="ctl00$PlaceHolderMain$generalSearchForm$txtGSStartDate" type="text"/>'
        '<input name="ctl00$PlaceHolderMain$generalSearchForm$txtGSEndDate" type="text"/>'
        '<a id="ctl00_PlaceHolderMain_btnNewSearch" href="javascript:__doPostBack('
        "'ctl00$PlaceHolderMain$btnNewSearch','')\">Search</a></div></div>"
    )


def no_results() -> str:
    return (
        search_form() + '<div class="ACA_Show"><div class="ACA_Message_Notice" id="ctl00_Place'
        'HolderMain_RecordSearchResultInfo_noDataMessageForSearchResultList_messageBar">'
        '<span class="ACA_Body_Text" id="ctl00_PlaceHolderMain_RecordSearchResultInfo_noData'
        'MessageForSearchResultList_lblMessage">Your search returned no results. Please modify'
        " your search criteria and try again.</span></div></div>"
    )


def _row(index: int, permit: PermitSnapshot, detail_href: str, record_id: str) -> str:
    ctl = f"ctl{index + 2:02d}"
    parity = "Odd" if index % 2 == 0 else "Even"
    prefix = f"{GRID}_{ctl}"
    return (
        f'<tr class="ACA_TabRow_{parity} ACA_TabRow_{parity}_FontSize">\n'
        f'<td><input class="aca_gridview_checkbox" id="{prefix}_CB_{index}" type="checkbox"/>'
        f'</td><td><div style="margin-right: 5px;">\n<span id="{prefix}_lblUpdatedTime">'
        f"{mdy(permit.applied_date)}</span>\n</div></td>\n<td><div>\n"
        f'<a href="{e(detail_href)}" id="{prefix}_hlPermitNumber">\n<strong>\n'
        f'<span id="{prefix}_lblPermitNumber1">{e(permit.permit_number)}</span></strong>\n'
        f'</a>\n<input id="RecordId" type="hidden" value="{e(record_id)}"/>\n</div></td>\n'
        f'<td><span id="{prefix}_lblType">{e(permit.permit_type)}</span></td>\n'
        f'<td><span id="{prefix}_lblDescription">{e(permit.work_description)}</span></td>\n'
        f'<td><span id="{prefix}_lblExpirationDate"></span></td>\n'
        f'<td><div id="{prefix}_panelStatus">\n<span id="{prefix}_lblStatus">'
        f"{e(permit.raw_status)}</span>\n</div></td>\n"
        f'<td><span id="{prefix}_lblShortNote"></span></td>\n<td class="ACA_Hide">'
        f'<span id="{prefix}_lblPermitAddress">{e(permit.address)}</span></td>\n</tr>'
    )


def results(rows: list[tuple[PermitSnapshot, str, str]], page_index: int, total: int) -> str:
    """One grid page. `rows` holds (permit, detail href, RecordId) for this page only."""
    first = page_index * PAGE_SIZE + 1
    last = first + len(rows) - 1
    shown_total = "100+" if total > 100 else str(total)
    pages = (min(total, 100) + PAGE_SIZE - 1) // PAGE_SIZE
    has_next = page_index + 1 < pages
    next_cell = (
        '<a class="aca_simple_text font11px" href="javascript:__doPostBack('
        f"'{PAGER_NEXT}','');\">Next &gt;</a>"
        if has_next
        else '<span class="aca_simple_text font11px">Next &gt;</span>'
    )
    body = "\n".join(_row(i, *row) for i, row in enumerate(rows))
    return (
        search_form() + '<div id="ctl00_PlaceHolderMain_dgvPermitList_updatePanel">'
        f'<table class="ACA_GridView ACA_Grid_Caption" id="{GRID}" pagecount="{pages}">'
        '<caption>Record list</caption><tbody><tr><td colspan="19"><span class="ACA_SmLabel">'
        f" Showing {first}-{last} of {shown_total} </span></td></tr>\n{body}\n"
        '<tr class="ACA_Table_Pages"><td colspan="9"><table class="aca_pagination"><tr>'
        f'<td class="aca_pagination_td"><span class="SelectedPageButton">{page_index + 1}'
        f'</span></td><td class="aca_pagination_td aca_pagination_PrevNext">{next_cell}</td>'
        "</tr></table></td></tr></tbody></table></div>"
    )


def _block(label: str, lines: Iterable[str]) -> str:
    content = "<br/>".join(e(line) for line in lines)
    return (
        f'<td class="td_parent_left"><div><h1><span>{e(label)}:</span></h1>'
        f'<span class="ACA_SmLabel ACA_SmLabel_FontSize"><table class="table_child">'
        f"<tr><td>{content}</td></tr></table></span></div></td>"
    )


def _more_item(label: str, value: str) -> str:
    return (
        '<div class="MoreDetail_Item"><div class="MoreDetail_ItemCol MoreDetail_ItemCol1">'
        f'<span>{e(label)}:</span></div><div class="MoreDetail_ItemCol MoreDetail_ItemCol2">'
        f"<span>{e(value)}</span></div></div>"
    )


def _conditions(permit: PermitSnapshot) -> str:
    if not permit.conditions:
        return ""
    rows = "".join(
        f'<tr class="ACA_TabRow_{"Odd" if i % 2 == 0 else "Even"}">'
        f'<td><span id="cc_ctl{i:02d}_lblConditionName">{e(c.name)}</span></td>'
        f'<td><span id="cc_ctl{i:02d}_lblConditionGroup">{e(c.group)}</span></td>'
        f'<td><span id="cc_ctl{i:02d}_lblConditionStatus">{e(c.status)}</span></td>'
        f'<td><span id="cc_ctl{i:02d}_lblConditionStatusDate">{mdy(c.status_date)}</span></td>'
        "</tr>"
        for i, c in enumerate(permit.conditions)
    )
    count = len(permit.conditions)
    return (
        '<div class="ACA_Message_Notice" id="ctl00_PlaceHolderMain_capConditions_divNotice">'
        f"<span>This record has {count} condition(s). Click to view.</span></div>"
        '<table id="ctl00_PlaceHolderMain_capConditions_gdvConditionList">'
        '<tr class="ACA_TabRow_Header"><th>Condition</th><th>Group</th><th>Status</th>'
        f"<th>Status Date</th></tr>{rows}</table>"
    )


INSPECTION_PANEL = "ctl00_PlaceHolderMain_InspectionList_inspectionUpdatePanel"
UPCOMING_PANEL = "ctl00_PlaceHolderMain_InspectionList_upcomingPanel"
COMPLETED_PANEL = "ctl00_PlaceHolderMain_InspectionList_completedPanel"
REFRESH_TARGET = "ctl00$PlaceHolderMain$InspectionList$btnRefreshGridView"
INSPECTION_PAGE_SIZE = 5  # ACA's inspection grids show five rows a page
COMPLETED_GRID = "ctl00$PlaceHolderMain$InspectionList$gvListCompleted"


def completed_pager_target(page_index: int) -> str:
    """The postback a completed grid's page link sends (ctlNN varies with the rows shown)."""
    pager_row = f"ctl{INSPECTION_PAGE_SIZE + 3:02d}"
    return f"{COMPLETED_GRID}${pager_row}$ctl{page_index:02d}"


def _inspection_row(status: str, title: str, by: str | None, detail_id: str) -> str:
    who = f"<br/><span>{e(by)}</span>" if by else ""
    return (
        '<tr class="InspectionListRow"><td><table role="presentation" cellpadding="0" '
        'cellspacing="0" border="0"><tr><td class="ACA_Width45em">'
        f'<span style="font-weight:bold">{e(status)}</span> <span>{e(title)}</span>{who}'
        '</td><td><div class="ACA_LinkButton"><span><a href="#" onclick="showInspection'
        f"PopupDialog('../Inspection/InspectionDetails.aspx?ID={detail_id}&amp;isPopup=Y')"
        '; return false;">View Details</a></span></div></td></tr></table></td></tr>'
    )


def inspection_id(permit: PermitSnapshot, kind: str, n: int) -> str:
    return str(1_000_000 + _digest(permit.permit_number, kind, str(n)) % 9_000_000)


def _tallies(results: list[str]) -> str:
    counts: dict[str, int] = {}
    for result in results:
        counts[result] = counts.get(result, 0) + 1
    return "".join(
        f'<span class="ACA_SmLabel">{e(name)} - {count}</span> ' for name, count in counts.items()
    )


def completed_panel(permit: PermitSnapshot, *, completed_page: int) -> str:
    """The inner HTML of the completed list's child UpdatePanel: caption with count, tallies,
    one page of rows and the pager. A pager postback is answered with this alone."""
    done = permit.inspections or []
    first = completed_page * INSPECTION_PAGE_SIZE
    shown = list(enumerate(done))[first : first + INSPECTION_PAGE_SIZE]
    completed_rows = "".join(
        _inspection_row(
            i.result or "",
            f"{i.type} ({inspection_id(permit, i.type, n)})",
            f"Result by: {i.inspector or 'TBD'} on {mdy(i.date)} at "
            f"{8 + _digest(permit.permit_number, str(n)) % 9:02d}:{(n * 7) % 60:02d} AM",
            inspection_id(permit, i.type, n),
        )
        for n, i in shown
    )
    pages = (len(done) + INSPECTION_PAGE_SIZE - 1) // INSPECTION_PAGE_SIZE
    pager = ""
    if pages > 1:
        cells = "".join(
            f'<td><span class="SelectedPageButton">{k + 1}</span></td>'
            if k == completed_page
            else f"<td><a href=\"javascript:__doPostBack('{completed_pager_target(k)}','')\">"
            f"{k + 1}</a></td>"
            for k in range(pages)
        )
        following = (
            f"<a href=\"javascript:__doPostBack('{completed_pager_target(completed_page + 1)}'"
            ",'')\">Next &gt;</a>"
            if completed_page + 1 < pages
            else "<span>Next &gt;</span>"
        )
        pager = (
            '<tr class="ACA_Table_Pages ACA_Table_Pages_FontSize"><td><table class="aca_'
            f'pagination"><tr>{cells}<td class="aca_pagination_td aca_pagination_PrevNext">'
            f"{following}</td></tr></table></td></tr>"
        )
    completed = (
        '<table id="ctl00_PlaceHolderMain_InspectionList_gvListCompleted" role="presentation">'
        f"{completed_rows}{pager}</table>"
        if done
        else '<span class="ACA_SmLabel">There are no completed inspections on this record.</span>'
    )
    return (
        f'<div id="divInspectionListCompleted"><h1><span>Completed ({len(done)})</span></h1>'
        f"{_tallies([i.result or '' for i in done])}{completed}</div>"
    )


def inspection_panel(permit: PermitSnapshot, *, completed_page: int) -> str:
    """The inner HTML of the inspection UpdatePanel as the refresh postback renders it: the
    upcoming and completed lists, each in its own child UpdatePanel as ACA nests them."""
    pending = permit.pending_inspections or []
    upcoming_rows = "".join(
        _inspection_row(
            "Scheduled" if p.date else "Pending",
            f"{p.type} ({inspection_id(permit, p.type, i)})",
            f"Scheduled for: {mdy(p.date)}" if p.date else None,
            inspection_id(permit, p.type, i),
        )
        for i, p in enumerate(pending)
    )
    upcoming = (
        '<table id="ctl00_PlaceHolderMain_InspectionList_gvListUpcoming" role="presentation">'
        f"{upcoming_rows}</table>"
        if pending
        else '<span class="ACA_SmLabel">You have not added any inspections.</span>'
    )
    return (
        f'<a id="ctl00_PlaceHolderMain_InspectionList_btnRefreshGridView" href="javascript:'
        f"__doPostBack('{REFRESH_TARGET}','')\"></a>"
        f'<div id="{UPCOMING_PANEL}">'
        '<div id="ctl00_PlaceHolderMain_InspectionList_divInspectionListUpcoming">'
        f"<h1><span>Upcoming ({len(pending)})</span></h1>"
        f"{upcoming}</div></div>"
        f'<div id="{COMPLETED_PANEL}">{completed_panel(permit, completed_page=completed_page)}'
        "</div>"
    )


def _empty_inspection_panel() -> str:
    """What a GET serves: the panel with only its refresh trigger; the page's script fills it."""
    return (
        f'<div id="{INSPECTION_PANEL}"><a id="ctl00_PlaceHolderMain_InspectionList_btnRefresh'
        f"GridView\" href=\"javascript:__doPostBack('{REFRESH_TARGET}','')\"></a></div>"
        '<script type="text/javascript">$(document).ready(function () { '
        "LoadInitInspectionList(); });</script>"
    )


def _asi_review(pairs: list[tuple[str, str]]) -> str:
    columns = "".join(
        '<div class="ACA_FLeft ASIReview2Columns"><span class="ACA_SmLabelBolder">'
        f'{e(label)}:</span> <span class="ACA_SmLabel">{e(value)}</span></div>'
        for label, value in pairs
    )
    return (
        '<div class="MoreDetail_ItemTitle">Application Information</div>'
        f'<div class="ACA_TabRow">{columns}</div>'
    )


def detail(permit: PermitSnapshot, *, agency_path: str, look: AgencyLook, anonymous: bool) -> str:
    address = ""
    if permit.address:
        street, _, rest = permit.address.partition(", ")
        second = f"<br/> {e(rest)} " if rest else " "
        address = (
            '<table class="table_child" id="tbl_worklocation" role="presentation"><tbody><tr>'
            '<td class="td_child_left font12px"></td><td class="NotBreakWord"><span '
            f'class="fontbold"> {e(street)}</span>{second}<span style="color:blue">*</span>'
            "<br/> </td></tr></tbody></table>"
        )
    salt = _digest(permit.jurisdiction, permit.permit_number)
    blocks = [
        _block("Applicant", ["OWNER-BUILDER", f"{salt % 9000 + 100} MAIN ST"]),
        _block(
            "Licensed Professional",
            [f"CONTRACTOR {salt % 97}", "GENERAL CONTRACTOR", f"B {salt % 900000 + 100000}"],
        ),
    ]
    if permit.work_description:
        blocks.append(_block("Project Description", [permit.work_description]))
    pairs = [
        ("Number of Stories", str(salt % 3 + 1)),
        ("Occupancy Group", "R-3" if salt % 2 else "B"),
    ]
    if permit.valuation is not None:
        pairs.insert(0, (look.value_label, f"${permit.valuation:,.2f}"))
    if look.layout == "asi_review":
        custom = _asi_review(pairs)
    else:
        custom = "<h1><span>Application Information</span></h1>" + "".join(
            _more_item(label, value) for label, value in pairs
        )
    parcel = ""
    if permit.parcel:
        parcel = (
            '<div id="ctl00_PlaceHolderMain_PermitDetailList1_palParceList">'
            '<div class="MoreDetail_ItemCol MoreDetail_ItemCol2"><table><tbody><tr><td>'
            f'<div class="MoreDetail_ItemCol MoreDetail_ItemCol2">{e(look.parcel_label)}:'
            f'{e(permit.parcel)}<span style="color:blue"> *</span></div></td></tr><tr><td><div '
            'class="MoreDetail_ItemCol MoreDetail_ItemCol2"><div class="ACA_SmLabel">Block:--'
            '</div></div></td></tr><tr><td><div class="MoreDetail_ItemCol MoreDetail_ItemCol2">'
            '<div class="ACA_SmLabel">Lot:--</div><div class="ACA_SmLabel">Subdivision:--</div>'
            "</div></td></tr></tbody></table></div></div>"
        )
    expiry = ""
    if permit.expires_date is not None:
        expiry = (
            '<div class="dv-expirationdate"><span class="ACA_SmLabelBolder">Expiration Date:'
            '</span> <span id="ctl00_PlaceHolderMain_lblExpirtionDate">'
            f"{mdy(permit.expires_date)}</span></div>"
        )
    inspections = _empty_inspection_panel() if anonymous else ""
    return (
        '<div class="ACA_Area_CapDetail"><div class="ACA_RightItem record-detail" '
        'id="ctl00_PlaceHolderMain_dvContent"><div class="record-summary"><div class="rec-left">'
        '<h1>\n <span dir="ltr" id="ctl00_PlaceHolderMain_lblPermitNumber">'
        f"{e(permit.permit_number)}</span></h1>\n<h1>\n"
        '<span class="span-permittype" id="ctl00_PlaceHolderMain_lblPermitType">'
        f"{e(permit.permit_type)}</span></h1>\n"
        '<div class="dv-recordstatus" id="ctl00_PlaceHolderMain_divRecordStatus"><h1>\n '
        f'<span id="ctl00_PlaceHolderMain_lblRecordStatus">{e(permit.raw_status)}</span></h1>'
        f"</div>{expiry}</div></div>{_conditions(permit)}"
        f'<div id="ctl00_PlaceHolderMain_divWorkLocation">{address}</div>'
        '<div id="ctl00_PlaceHolderMain_PermitDetailList1_updatePanel"><table role="presentation">'
        f"<tr>{''.join(blocks)}</tr></table>"
        '<table><tbody><tr id="TRMoreDetail" style="display: none;"><td>'
        f'<span id="ctl00_PlaceHolderMain_PermitDetailList1_tbASIList">{custom}</span>'
        f"{parcel}</td></tr></tbody></table></div>"
        '<div id="ctl00_PlaceHolderMain_divProcessingStatus">Loading...</div>'
        f"{inspections}</div></div>"
    )


_ICON = {"complete": "Task is complete", "in_progress": "Task is in progress",
         "not_started": "Task is not started"}  # fmt: skip


def processing(permit: PermitSnapshot, *, odd_keys: bool) -> str:
    """The GetProcessingData fragment; `odd_keys` adds the stray spaces and NBSP seen on
    SBC and Fort Lauderdale around "Marked as" / "on"."""
    timeline = permit.timeline or []
    tasks = permit.workflow or []
    marked, on = ("Marked as&nbsp; ", " &nbsp;on ") if odd_keys else ("Marked as ", " on ")

    def task_html(task: WorkflowTask, children: str) -> str:
        events: list[StatusEvent] = [ev for ev in timeline if ev.discipline == task.name]
        if task.completed_at is not None:
            state = "complete"
        elif events or task.status == "In Progress":
            state = "in_progress"
        else:
            state = "not_started"
        history = "".join(
            f'<div class="ACA_TaskHistory">{marked}<span>{e(ev.status)}</span>{on}'
            f"<span>{mdy(ev.changed_at if isinstance(ev.changed_at, date) else None)}</span>"
            + (f" by <span>{e(ev.actor)}</span>" if ev.actor else "")
            + "</div>"
            for ev in events
        )
        assign = ""
        if state != "complete":
            assign = (
                '<div class="ACA_TaskAssignment">Assigned to <span>Building Division</span></div>'
            )
        return (
            f'<div class="ACA_Workflow_Task"><div class="task-title"><img alt="{_ICON[state]}" '
            'src="app_themes/Default/assets/task.png"/> <span class="ACA_Workflow_TaskName">'
            f"{e(task.name)}</span></div>{history}{assign}"
            f'<div class="ACA_Workflow_SubTasks">{children}</div></div>'
        )

    html: list[str] = []
    index = 0
    while index < len(tasks):
        task = tasks[index]
        index += 1
        children: list[str] = []
        if task.name == "Plan Review":  # discipline reviews nest under plan review
            while index < len(tasks) and tasks[index].name.endswith(" Review"):
                children.append(task_html(tasks[index], ""))
                index += 1
        html.append(task_html(task, "".join(children)))
    return f'<div class="ACA_ProcessingStatus">{"".join(html)}</div>'


def detail_href(agency_path: str, module: str, agency: str, cap: tuple[str, str, str]) -> str:
    query = urlencode(
        {"Module": module, "TabName": module, "capID1": cap[0], "capID2": cap[1],
         "capID3": cap[2], "agencyCode": agency, "IsToShowInspection": ""}
    )  # fmt: skip
    return f"{agency_path}/Cap/CapDetail.aspx?{query}"


def login() -> str:
    return (
        '<div class="ACA_Content welcome-page ACA_Login"><table><tr><td class="loginPanel">'
        '<iframe aria-label="Login Frame" id="LoginFrame" src="AngularUI/CommunityView/'
        'login-panel?inLegacyUI=true" title="Login Frame"></iframe></td></tr></table></div>'
    )


def error() -> str:
    return (
        '<div class="ACA_Content"><div class="ACA_Error_Label"><h1>An error has occurred.</h1>'
        "<p>Your session may have expired or the request was not valid. Please return to the"
        " home page and try again.</p></div></div>"
    )


def csrf_refusal() -> str:
    return (
        '<div class="ACA_Content"><div class="ACA_Message_Error"><span>Potential cross-site '
        "request forgery attacks. The Referer and Origin headers are missing or do not match "
        "the site.</span></div></div>"
    )


def maintenance() -> str:
    return (
        '<div class="ACA_Content"><h1>Scheduled Maintenance</h1><p>Accela Citizen Access is '
        "currently undergoing maintenance. Please try again later.</p></div>"
    )
