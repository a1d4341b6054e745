"""gpux matching service: the order book, price-time priority, exactly-once trades."""
