"""``catalog.published``: which data version each catalog topic last received.

Rows are keyed by the physical topic name (the namespace's prefix included), so services
of several namespaces sharing one database never share a row; callers speak logical names.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from gpux_catalog.domain.publication import PublishedVersion

PUBLISH_LOCK = "catalog:publish"


class PostgresPublishedVersions:
    """The published-versions repository on the connection of one open transaction."""

    def __init__(self, conn: asyncpg.Connection, namespace: str) -> None:
        self._conn = conn
        self._namespace = namespace

    async def lock(self) -> None:
        """Serialise publishing across replicas until the current transaction ends."""
        await self._conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", PUBLISH_LOCK)

    async def get(self, topics: Sequence[str]) -> dict[str, PublishedVersion]:
        """What each of these topics was last given (absent: never, or its row deleted)."""
        logical = {self._namespace + topic: topic for topic in topics}
        rows = await self._conn.fetch(
            "SELECT topic, data_version, items, published_at FROM catalog.published"
            " WHERE topic = ANY($1::text[])",
            list(logical),
        )
        return {
            logical[row["topic"]]: PublishedVersion(
                row["data_version"], row["items"], row["published_at"]
            )
            for row in rows
        }

    async def put(self, topic: str, version: PublishedVersion) -> None:
        """Remember that ``topic`` now holds ``version``."""
        await self._conn.execute(
            "INSERT INTO catalog.published (topic, data_version, items, published_at)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (topic) DO UPDATE SET"
            " data_version = EXCLUDED.data_version, items = EXCLUDED.items,"
            " published_at = EXCLUDED.published_at",
            self._namespace + topic,
            version.data_version,
            version.items,
            version.published_at,
        )
