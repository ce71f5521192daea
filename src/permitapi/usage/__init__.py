"""Metering: monthly meters per key, burst windows, and the usage endpoint."""
