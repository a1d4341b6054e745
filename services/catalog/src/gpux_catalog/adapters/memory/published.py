"""The published-versions repository on a plain dictionary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpux_catalog.domain.publication import PublishedVersion


@dataclass
class CatalogState:
    """Everything the catalog keeps: what each topic (by logical name) was last given."""

    versions: dict[str, PublishedVersion] = field(default_factory=dict)


class MemoryPublishedVersions:
    """``catalog.published`` as a dictionary of the unit's state."""

    def __init__(self, state: CatalogState) -> None:
        self._state = state

    async def lock(self) -> None:
        """Nothing to serialise: one process holds the state."""

    async def get(self, topics: Sequence[str]) -> dict[str, PublishedVersion]:
        """What each of these topics was last given (absent: never, or its record deleted)."""
        return {
            topic: self._state.versions[topic] for topic in topics if topic in self._state.versions
        }

    async def put(self, topic: str, version: PublishedVersion) -> None:
        """Remember that ``topic`` now holds ``version``."""
        self._state.versions[topic] = version
