"""SQL of the catalog service: which data version each topic last received."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

PUBLISH_LOCK = "catalog:publish"


async def lock_publishing(conn: asyncpg.Connection) -> None:
    """Serialise publishing across replicas until the current transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", PUBLISH_LOCK)


async def published_versions(conn: asyncpg.Connection, topics: Sequence[str]) -> dict[str, int]:
    """The data version last published to each of these topics (absent: never)."""
    rows = await conn.fetch(
        "SELECT topic, data_version FROM catalog.published WHERE topic = ANY($1::text[])",
        list(topics),
    )
    return {row["topic"]: row["data_version"] for row in rows}


async def record_published(
    conn: asyncpg.Connection, topic: str, data_version: int, items: int, at: datetime
) -> None:
    """Remember that ``topic`` now holds ``data_version`` (``items`` records)."""
    await conn.execute(
        "INSERT INTO catalog.published (topic, data_version, items, published_at)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (topic) DO UPDATE SET"
        " data_version = EXCLUDED.data_version, items = EXCLUDED.items,"
        " published_at = EXCLUDED.published_at",
        topic,
        data_version,
        items,
        at,
    )
