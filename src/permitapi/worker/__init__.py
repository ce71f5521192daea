"""The background job runner: durable jobs live in the database (see design.md)."""
