"""Buyers' wallets: top-ups (commands for billing) and balances (billing's Redis read model)."""
