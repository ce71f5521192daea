"""Permits, room by room: `lookup` (status and batch, with cache and live fetch; `lookup/fast`,
the cached hit's short path; `lookup/sandbox`, answers from the curated dataset), `operation`
(a lookup that finishes later), `identity` (which permit a number names) and `resource` (the
canonical resource, inspections, conditions, history and resolutions). The permits table
(`models`, `repository`) and its snapshot codec are shared by the rooms."""
