"""Where the test session finds Kafka, PostgreSQL and Redis, in order of preference.

1. ``GPUX_KAFKA_BOOTSTRAP``, ``GPUX_DATABASE_URL`` and ``GPUX_REDIS_URL`` all set: use them.
2. A Docker engine answers: testcontainers (apache/kafka, postgres, redis images).
3. Otherwise the local launcher (`gpux infra up`): Kafka from its jars, PostgreSQL and
   Redis from Debian's packages, on loopback.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from gpux_devinfra.infra import Endpoints

_ENV = ("GPUX_KAFKA_BOOTSTRAP", "GPUX_DATABASE_URL", "GPUX_REDIS_URL")


def from_environment() -> Endpoints | None:
    """Endpoints named by the environment, when all three are."""
    values = [os.environ.get(name) for name in _ENV]
    if not all(values):
        return None
    kafka, database, redis = (v for v in values if v)
    return Endpoints(kafka, database, redis)


def docker_available() -> bool:
    """Whether a Docker engine answers (the client alone is not enough)."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        return bool(client.ping())
    except Exception:
        return False


@contextlib.contextmanager
def from_containers() -> Iterator[Endpoints]:
    """Throwaway containers for the three services."""
    from testcontainers.kafka import KafkaContainer
    from testcontainers.postgres import PostgresContainer
    from testcontainers.redis import RedisContainer

    with (
        KafkaContainer("confluentinc/cp-kafka:7.6.0").with_kraft() as kafka,
        PostgresContainer("postgres:16", driver=None) as pg,
        RedisContainer("redis:7") as redis,
    ):
        redis_url = f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
        yield Endpoints(kafka.get_bootstrap_server(), pg.get_connection_url(), redis_url)


@contextlib.contextmanager
def session_endpoints() -> Iterator[Endpoints]:
    """The endpoints for this test session, by the order above."""
    given = from_environment()
    if given is not None:
        yield given
    elif docker_available():
        with from_containers() as endpoints:
            yield endpoints
    else:
        from gpux_devinfra import infra

        yield infra.up()
