"""Pricing in memory: the fake unit of work and repositories the service tests use."""
