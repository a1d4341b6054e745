"""What only the admin key may do to accounts: suspend, reactivate, credit their wallets."""
