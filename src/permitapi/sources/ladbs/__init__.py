"""LADBS (City of Los Angeles Department of Building and Safety): PCIS permit report pages and
the City's Socrata open-data datasets (research/portals.md §1)."""
