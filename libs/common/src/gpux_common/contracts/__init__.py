"""Event payloads, one module per producing domain; every payload is versioned."""
