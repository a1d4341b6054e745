"""Local infrastructure (Kafka, PostgreSQL, Redis on loopback) and the gpux command line."""
