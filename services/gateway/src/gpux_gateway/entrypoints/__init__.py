"""How the gateway is reached: Kafka subscribers, the HTTP app, its loops."""
