"""Pricing on PostgreSQL: the unit of work and the repositories (all of pricing's SQL)."""
