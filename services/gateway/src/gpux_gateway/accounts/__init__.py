"""Accounts: sign-up and the calling account."""
