"""The catalog on PostgreSQL: its unit of work and the published-versions repository (all SQL)."""
