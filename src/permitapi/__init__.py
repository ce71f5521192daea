"""permitapi: a read-only building-permit status, discovery and monitoring API."""

__version__ = "0.1.0"
