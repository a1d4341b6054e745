"""Billing's entrypoints: Kafka subscribers."""
