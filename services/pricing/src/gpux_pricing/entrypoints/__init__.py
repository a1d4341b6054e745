"""Kafka consumers of the pricing service."""
