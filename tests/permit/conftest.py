"""The permit tests' cleaning `ctx` and fake portal (tests/support/permit_tables.py)."""

from tests.support.permit_tables import clean_permit_tables, ctx, portal

__all__ = ["clean_permit_tables", "ctx", "portal"]
