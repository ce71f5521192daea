"""Saved searches: stored discovery criteria evaluated daily; new matches become events."""
