"""Permit lookups: status with cache and live fetch, batch, resolutions, canonical resource,
inspections, conditions and history."""
