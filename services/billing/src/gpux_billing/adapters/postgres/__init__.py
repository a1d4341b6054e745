"""Billing in PostgreSQL (schema ``billing``): the unit of work and its repositories."""
