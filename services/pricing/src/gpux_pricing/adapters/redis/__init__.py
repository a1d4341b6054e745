"""Pricing's read models in Redis: the latest quotes, the live price stream, book histories."""
