"""The billing service's pure rules: the double-entry ledger, its transfers and amounts.

Handlers build transfers with ``transfers`` (topup, hold, release, charge, exchange,
reversal), compute amounts with ``amounts`` (the only places billing rounds), and post them
through a ``store.Ledger``: the PostgreSQL adapter, or ``memory.MemoryLedger`` in tests.
"""
