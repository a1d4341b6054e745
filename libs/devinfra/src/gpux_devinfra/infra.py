"""Bring the three local services up, report them, take them down."""

from __future__ import annotations

from dataclasses import dataclass

from gpux_devinfra import kafka, postgres, redis


@dataclass(frozen=True)
class Endpoints:
    """Where the local infrastructure answers."""

    kafka_bootstrap: str
    database_url: str
    redis_url: str

    def env(self) -> dict[str, str]:
        """As GPUX_* environment variables."""
        return {
            "GPUX_KAFKA_BOOTSTRAP": self.kafka_bootstrap,
            "GPUX_DATABASE_URL": self.database_url,
            "GPUX_REDIS_URL": self.redis_url,
        }


@dataclass(frozen=True)
class ServiceStatus:
    """One local service: our pid (if it runs) and whether its endpoint answers."""

    name: str
    pid: int | None
    answers: bool
    endpoint: str


def up() -> Endpoints:
    """Start (or reuse) Redis, PostgreSQL and Kafka and wait until each answers."""
    redis_url = redis.up()
    database_url = postgres.up()
    bootstrap = kafka.up()
    return Endpoints(bootstrap, database_url, redis_url)


def status() -> list[ServiceStatus]:
    """The state of each local service."""
    kafka_pid, kafka_ok = kafka.status()
    return [
        ServiceStatus("kafka", kafka_pid, kafka_ok, f"127.0.0.1:{kafka.PORT}"),
        ServiceStatus("postgres", postgres.pid(), postgres.answers(), postgres.url()),
        ServiceStatus("redis", redis.pid(), redis.answers(), redis.url()),
    ]


def down() -> list[str]:
    """Stop what we started; returns the names stopped."""
    stopped = []
    for name, stop in (("kafka", kafka.down), ("postgres", postgres.down), ("redis", redis.down)):
        if stop():
            stopped.append(name)
    return stopped
