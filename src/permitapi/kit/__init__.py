"""Domain-free helpers: clock, identifiers, hashing."""
