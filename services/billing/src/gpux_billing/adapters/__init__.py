"""Billing's adapters: PostgreSQL (every SQL statement), Redis (read models), memory (fakes)."""
