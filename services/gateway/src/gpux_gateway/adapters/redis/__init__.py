"""The gateway's Redis adapters: rate limits, and the read models other services keep there."""
