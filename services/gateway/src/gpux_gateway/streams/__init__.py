"""Live market data as server-sent events."""
