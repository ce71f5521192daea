"""Telemetry primitives (metrics, structured logs) at the bottom of the layers: sources, web,
mcp and the domains record into them; the observability domain (its endpoints and queue
readings) sits above them and reads them back."""
