"""Webhooks: an account's signed HTTP endpoints for its events, and their deliveries."""
