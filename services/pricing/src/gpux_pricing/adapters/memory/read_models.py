"""Pricing's read models in memory: what the Redis adapter would hold, and every write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpux_contracts.prices import BestAskChanged
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.quotes import key_of


@dataclass
class MemoryReadModels:
    """The latest quote per key, the price stream, each book's history bodies."""

    quotes: dict[str, BestAskChanged] = field(default_factory=dict)
    stream: list[BestAskChanged] = field(default_factory=list)
    histories: dict[tuple[str, str, str], str] = field(default_factory=dict)
    """(gpu, tier, interval) -> the JSON body readers get."""
    writes: int = 0
    """Calls that wrote something."""

    async def write_quotes(self, quotes: Sequence[BestAskChanged], *, stream: bool) -> None:
        """Keep the quotes; ``stream``: append them to the stream too."""
        if not quotes:
            return
        self.writes += 1
        for quote in quotes:
            self.quotes[key_of(quote)] = quote
        if stream:
            self.stream.extend(quotes)

    async def write_histories(self, snapshots: Sequence[Snapshot]) -> None:
        """Keep each book's history bodies."""
        if not snapshots:
            return
        self.writes += 1
        for history in snapshots:
            for interval, body in history.bodies.items():
                self.histories[(history.gpu, history.tier, interval.value)] = body
