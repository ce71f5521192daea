"""The portal simulator: the permit portals' real wire formats served from a deterministic,
seeded data set, with a control API for state changes and faults.

`store.py` holds the ground truth and the faults; each family module (`ladbs.py`,
`epicla.py`, `aca.py`) generates its permits and serves its portal's paths under the real host
name (`/<host>/<path>`, see permitapi.sources.http.rewrite_for_simulator).
"""
