"""Durable asynchronous operations (permit_refresh), run by the worker."""
