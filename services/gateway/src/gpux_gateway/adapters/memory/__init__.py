"""The gateway's fake unit of work and in-memory repositories (the service tests use them)."""
