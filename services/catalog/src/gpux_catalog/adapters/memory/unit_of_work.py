"""The catalog's fake unit of work: its state in memory, committed or restored whole."""

from __future__ import annotations

from gpux_catalog.adapters.memory.published import CatalogState, MemoryPublishedVersions
from gpux_platform.unit_of_work import MemoryUnitOfWork


class MemoryCatalogUnitOfWork(MemoryUnitOfWork):
    """The catalog's state and outbox in memory; ``published`` lists every record sent."""

    state: CatalogState

    def __init__(self, state: CatalogState | None = None) -> None:
        super().__init__(CatalogState() if state is None else state)

    @property
    def versions(self) -> MemoryPublishedVersions:
        """The published-versions repository on the unit's current state."""
        return MemoryPublishedVersions(self.state)

    async def commit(self) -> None:
        """Commit; an event id queued again is sent again, as the PostgreSQL unit does.

        The base unit publishes an event id once; the catalog's outbox forgets having sent
        the ids it queues again (``adapters.postgres.unit_of_work``), so here they are
        appended to ``published`` a second time.
        """
        sent, self.published = self.published, []
        await super().commit()
        self.published = sent + self.published
