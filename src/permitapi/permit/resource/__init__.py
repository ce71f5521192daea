"""Stored reads: resolutions, the canonical permit resource, inspections, conditions and
history."""
