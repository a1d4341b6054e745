"""Billing's Redis read models: the wallets' balances."""
