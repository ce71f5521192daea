"""Storage: engines, the declarative base, sessions and Alembic migrations."""
