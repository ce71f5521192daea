"""Idempotency-Key handling for the POST endpoints the contract names."""
