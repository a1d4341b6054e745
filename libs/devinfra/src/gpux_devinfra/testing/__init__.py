"""Test fixtures: real Kafka, PostgreSQL and Redis, isolated per test session."""
