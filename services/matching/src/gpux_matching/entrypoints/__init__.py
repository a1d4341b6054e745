"""Kafka consumers of the matching service."""
