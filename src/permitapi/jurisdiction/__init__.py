"""The jurisdiction directory, stats and requested jurisdictions; the router also serves
GET /jurisdictions/coverage, whose rules are `coverage/`'s."""
