"""The catalog service's adapters: Kafka publisher and PostgreSQL repository."""
