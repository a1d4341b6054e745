"""What the price stream reads: the stream of best-ask updates pricing appends (in Redis)."""

from __future__ import annotations

from typing import Protocol

Entry = tuple[str, str]
"""One stream entry: its id (what a client resumes from) and its JSON data."""


class PriceSource(Protocol):
    """The stream of best-ask updates, read by one feed per process and by resuming clients."""

    async def price_entries_up_to(self, end: str, count: int) -> list[Entry]:
        """Up to ``count`` entries up to the entry ``end`` included (``$``: the newest),
        newest first."""
        ...

    async def price_entries_after(self, start: str, count: int) -> list[Entry]:
        """Up to ``count`` entries after the entry ``start``, oldest first (one short read)."""
        ...

    async def read_prices(self, after: str, block_ms: int) -> list[Entry]:
        """The entries after ``after``, oldest first, waiting up to ``block_ms`` for one."""
        ...
