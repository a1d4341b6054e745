"""Pricing's adapters: PostgreSQL (the store), Redis (read models), memory (for tests)."""
