"""Buyers' orders: placed as commands for billing, shown as billing and the book report them."""
