"""gpux billing service: Prepaid wallets, holds, leases and payouts on a double-entry ledger."""
