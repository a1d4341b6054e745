"""The billing service's adapters: the ledger repository (PostgreSQL)."""
