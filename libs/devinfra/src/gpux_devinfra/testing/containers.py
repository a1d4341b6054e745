"""Throwaway Kafka, PostgreSQL and Redis containers (testcontainers), when Docker answers.

``docker`` and ``testcontainers`` are development dependencies of the workspace, not of
gpux-devinfra: ``gpux_devinfra.testing.endpoints`` imports this module only when it can.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import docker
from testcontainers.community.kafka import KafkaContainer
from testcontainers.community.postgres import PostgresContainer
from testcontainers.community.redis import RedisContainer

from gpux_devinfra.infra import Endpoints


def docker_available() -> bool:
    """Whether a Docker engine answers (the client alone is not enough)."""
    try:
        client = docker.from_env(timeout=3)
        return bool(client.ping())
    except Exception:
        return False


@contextlib.contextmanager
def from_containers() -> Iterator[Endpoints]:
    """Throwaway containers for the three services."""
    with (
        KafkaContainer("confluentinc/cp-kafka:7.6.0").with_kraft() as kafka,
        PostgresContainer("postgres:16", driver=None) as pg,
        RedisContainer("redis:7") as redis,
    ):
        redis_url = f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
        yield Endpoints(kafka.get_bootstrap_server(), pg.get_connection_url(), redis_url)
