"""Developer tools that are not part of the service package (see tools/clients)."""
