"""The gateway's adapters: SQL repository, rate limiter."""
