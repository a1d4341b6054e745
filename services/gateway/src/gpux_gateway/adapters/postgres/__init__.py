"""The gateway's PostgreSQL adapters: the unit of work and every repository (all its SQL)."""
