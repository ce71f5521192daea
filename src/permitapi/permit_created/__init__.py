"""The permit_created monitor: one shared daily discovery pass over LADBS and EPIC-LA."""
