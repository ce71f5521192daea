"""Sandbox keys and the keyless demo: status and batch answered from the curated dataset beside
this package's modules."""
