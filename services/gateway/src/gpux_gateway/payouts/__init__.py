"""Sellers' payouts: requests from their payable earnings, their status, the admin's word."""
