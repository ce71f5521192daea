"""The fresh-cache-hit fast path of GET status: raw-driver SQL, its connections and a route that
skips FastAPI's parameter solver."""
