"""Liveness and readiness probes."""
