"""Source health: every portal fetch outcome, and the public status page built from them."""
