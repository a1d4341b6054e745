"""The catalog in memory: the unit of work and repository the service tests use."""
