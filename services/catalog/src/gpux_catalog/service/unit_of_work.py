"""What the catalog's handlers receive: the published-versions repository and the outbox."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gpux_catalog.domain.publication import PublishedVersion
from gpux_platform.unit_of_work import UnitOfWork


class PublishedVersions(Protocol):
    """Which data version each catalog topic (by logical name) was last given."""

    async def lock(self) -> None:
        """Serialise publishing across replicas until the unit of work ends."""
        ...

    async def get(self, topics: Sequence[str]) -> dict[str, PublishedVersion]:
        """What each of these topics was last given (absent: never, or its record deleted)."""
        ...

    async def put(self, topic: str, version: PublishedVersion) -> None:
        """Remember that ``topic`` now holds ``version`` (replacing what it held before)."""
        ...


class CatalogUnitOfWork(UnitOfWork, Protocol):
    """The platform's unit of work (inbox, outbox, commit) with the catalog's repository.

    Its outbox sends an event again when it is queued again, also one it sent before: the
    catalog's records are states that a recreated topic needs once more under the same ids.
    """

    @property
    def versions(self) -> PublishedVersions:
        """The published-versions repository of this unit."""
        ...
