"""What gpux services say to each other: event payloads, topics, money, ids. Pydantic only."""
