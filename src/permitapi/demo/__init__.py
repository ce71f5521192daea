"""The anonymous demo's admission: keyless status and batch calls (answered from the curated
dataset in `permit/lookup/sandbox`) and their per-address cap."""
