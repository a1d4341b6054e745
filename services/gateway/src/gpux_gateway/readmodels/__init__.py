"""In-process read models the gateway builds from Kafka topics (served by its routes)."""
