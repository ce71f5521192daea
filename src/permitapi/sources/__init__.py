"""Source adapters for the permit portals, the jurisdiction directory and outbound HTTP."""
