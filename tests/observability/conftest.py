"""The permit tests' cleaning `ctx` and fake portal, for metrics that need lookups."""

from tests.permit.conftest import clean_permit_tables, ctx, portal

__all__ = ["clean_permit_tables", "ctx", "portal"]
