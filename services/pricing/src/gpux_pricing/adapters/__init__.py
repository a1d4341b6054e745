"""The pricing service's adapters: SQL repository."""
