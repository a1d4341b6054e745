"""Market data and sessions: best asks, depth, candles, the order book; trading open or halted."""
