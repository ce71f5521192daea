"""Domain events: the one seam through which the service announces what happened.

Events are written to the `domain_events` outbox in the same transaction as the change that
caused them, so a rolled-back change never fires an event and a crash never loses one. The
monitoring work (webhooks, the events feed) reads the outbox.
"""
