"""Permit watches: enrollment, the events of every observation of a watched permit, and the
daily watch check."""
