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
from types import ModuleType

from gpux_devinfra import infra
from gpux_devinfra.infra import Endpoints

_ENV = ("GPUX_KAFKA_BOOTSTRAP", "GPUX_DATABASE_URL", "GPUX_REDIS_URL")


def from_environment() -> Endpoints | None:
    """Endpoints named by the environment, when all three are."""
    values = [os.environ.get(name) for name in _ENV]
    if not all(values):
        return None
    kafka, database, redis = (v for v in values if v)
    return Endpoints(kafka, database, redis)


def _containers() -> ModuleType | None:
    """``gpux_devinfra.testing.containers`` when Docker answers; None without Docker or
    without its (development-only) client libraries."""
    try:
        # Imported here: docker and testcontainers are the workspace's dev dependencies only.
        from gpux_devinfra.testing import containers  # noqa: PLC0415
    except ImportError:
        return None
    return containers if containers.docker_available() else None


@contextlib.contextmanager
def session_endpoints() -> Iterator[Endpoints]:
    """The endpoints for this test session, by the order above."""
    given = from_environment()
    containers = None if given is not None else _containers()
    if given is not None:
        yield given
    elif containers is not None:
        with containers.from_containers() as endpoints:
            yield endpoints
    else:
        yield infra.up()
