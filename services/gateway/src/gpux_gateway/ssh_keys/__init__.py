"""SSH public keys: the keys a buyer registers on its account, for the machines it leases."""
