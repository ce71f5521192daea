"""Stats, analytics and the directory count read every stored permit of a jurisdiction, so
these tests start from empty permit tables (tests/support/permit_tables.py): another test's
permits, left in the worker's session database, would otherwise be counted."""

from tests.support.permit_tables import clean_permit_tables, ctx

__all__ = ["clean_permit_tables", "ctx"]
