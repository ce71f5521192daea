"""The jurisdiction directory, coverage, stats and requested jurisdictions."""
