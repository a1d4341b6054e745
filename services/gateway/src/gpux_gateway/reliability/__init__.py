"""Seller reliability: billing's counts of leases ready in time, failed and reclaimed, per
offer and per seller, kept from ``billing.reliability`` and shown on the sellers' offers."""
