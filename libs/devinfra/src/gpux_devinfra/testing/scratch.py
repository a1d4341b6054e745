"""Scratch state on the shared servers, removed afterwards: a database of one's own, and the
topics and keys of a namespace (for test sessions and benchmarks)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from aiokafka.admin import AIOKafkaAdminClient
from redis.asyncio import Redis

from gpux_devinfra.infra import Endpoints


def with_database(url: str, database: str) -> str:
    """``url`` pointing at another database of the same server."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


async def _as_admin(server_url: str, statement: str) -> None:
    admin = await asyncpg.connect(with_database(server_url, "postgres"))
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def scratch_database(server_url: str, name: str) -> AsyncIterator[str]:
    """A new empty database ``name`` on the server of ``server_url``; yields its URL and drops
    it afterwards, also when the body fails or is cancelled."""
    await _as_admin(server_url, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(server_url, name)
    finally:
        await _as_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def drop_namespace(endpoints: Endpoints, namespace: str) -> None:
    """Delete the namespace's topics and Redis keys."""
    kafka = AIOKafkaAdminClient(bootstrap_servers=endpoints.kafka_bootstrap)
    await kafka.start()
    try:
        ours = [t for t in await kafka.list_topics() if t.startswith(namespace)]
        if ours:
            await kafka.delete_topics(ours)
    finally:
        await kafka.close()
    redis = Redis.from_url(endpoints.redis_url)
    try:
        keys = [k async for k in redis.scan_iter(match=f"{namespace}*", count=1000)]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()
