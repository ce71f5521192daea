"""Accounts, API keys and plans."""
