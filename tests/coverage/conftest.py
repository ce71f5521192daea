"""Coverage is observed by lookups: the permit tests' cleaning `ctx` and fake portal."""

from tests.support.permit_tables import clean_permit_tables, ctx, portal

__all__ = ["clean_permit_tables", "ctx", "portal"]
