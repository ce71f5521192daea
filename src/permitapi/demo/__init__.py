"""The anonymous demo: keyless status and batch calls answered from the curated dataset."""
