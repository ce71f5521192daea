"""Webhooks: registrations, signed deliveries and the delivery engine."""
