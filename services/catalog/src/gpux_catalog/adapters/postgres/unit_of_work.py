"""The catalog's unit of work on PostgreSQL: one transaction, its repository and outbox."""

from __future__ import annotations

import asyncpg

from gpux_catalog.adapters.postgres.published import PostgresPublishedVersions
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "catalog"


class PostgresCatalogUnitOfWork(PostgresUnitOfWork):
    """``catalog.published`` and ``catalog.outbox`` in one transaction.

    ``namespace`` prefixes the topic names the versions are recorded under, as it prefixes
    the topics the relay publishes to.
    """

    def __init__(self, pool: asyncpg.Pool, namespace: str = "") -> None:
        super().__init__(pool, SCHEMA)
        self.namespace = namespace

    @property
    def versions(self) -> PostgresPublishedVersions:
        """The published-versions repository, on the open transaction's connection."""
        return PostgresPublishedVersions(self.conn, self.namespace)

    async def commit(self) -> None:
        """Forget having sent the queued event ids before, then commit as every unit does.

        The outbox writes an event id once (a replay is skipped). The catalog queues the same
        ids again on purpose, when a version record was deleted to have its topic published
        again (after the topic was recreated): its rows already sent are dropped first, so
        the relay sends those records again. Rows not sent yet stay, and go out once.
        """
        ids = [message.envelope.event_id for message in self.outbox.messages]
        if ids:
            await self.conn.execute(
                "DELETE FROM catalog.outbox"
                " WHERE published_at IS NOT NULL AND event_id = ANY($1::text[])",
                ids,
            )
        await super().commit()
