"""How the gateway is reached: Kafka subscribers, the HTTP app (its context, dependencies,
shared request shapes and the Idempotency-Key header), its loops."""
