"""Field coverage: which fields each successful lookup found, per jurisdiction, and
GET /jurisdictions/coverage's answer built from those observations."""
