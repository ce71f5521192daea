"""The drift canary: known public records per family, read through the adapters (page classifier
and parsers included), each reported as reached or not and with its expected fields present,
missing or changed in shape. `permitapi sources canary` runs it; the worker runs it daily
(source_health.jobs) and /developers/status.json shows the latest result."""
