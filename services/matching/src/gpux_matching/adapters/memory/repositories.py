"""In-memory repositories over one ``MatchingState``: the tables of ``matching`` as dicts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_matching.domain import Command, decode_command, encode_command


@dataclass
class MatchingState:
    """Everything the fake database holds."""

    commands: list[tuple[int, int, str, str]] = field(default_factory=list)
    """(seq, partition, kind, JSON body) of every logged command, in seq order."""
    heads: dict[int, int] = field(default_factory=dict)
    snapshots: dict[int, dict[int, str]] = field(default_factory=dict)
    """Per partition: seq -> JSON body."""
    offers: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    """Offer id -> (seller id, gpu, revision)."""
    orders: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Order id -> (buyer id, gpu)."""
    market: dict[str, tuple[str, str | None, datetime]] = field(default_factory=dict)
    """Scope -> (state, reason, changed at)."""
    last_seq: int = 0


def store_snapshot(
    state: MatchingState, partition: int, seq: int, body: str | Mapping[str, Any], keep: int = 2
) -> None:
    """Keep the state after ``seq`` as JSON; the partition's older snapshots beyond ``keep`` go."""
    kept = state.snapshots.setdefault(partition, {})
    kept.setdefault(seq, body if isinstance(body, str) else json.dumps(body))
    for old in sorted(kept)[:-keep]:
        del kept[old]


class MemoryCommandLog:
    """The command log, heads and snapshots of a ``MatchingState``."""

    def __init__(self, state: MatchingState) -> None:
        self.state = state

    async def lock_head(self, partition: int) -> int:
        """The partition's head (units run one at a time here: nothing to lock)."""
        return self.state.heads.setdefault(partition, 0)

    async def head(self, partition: int) -> int:
        """The partition's head (0: nothing logged)."""
        return self.state.heads.get(partition, 0)

    async def append(self, partition: int, commands: Sequence[Command]) -> list[int]:
        """Log commands in order and move the head to the last; their seqs."""
        seqs = []
        for command in commands:
            self.state.last_seq += 1
            kind, body = encode_command(command)
            self.state.commands.append((self.state.last_seq, partition, kind, body))
            seqs.append(self.state.last_seq)
        if seqs:
            self.state.heads[partition] = seqs[-1]
        return seqs

    async def commands_after(self, partition: int, seq: int) -> list[tuple[int, Command]]:
        """Every command logged for ``partition`` after ``seq``, in order."""
        return [
            (s, decode_command(kind, body))
            for s, p, kind, body in self.state.commands
            if p == partition and s > seq
        ]

    async def save_snapshot(
        self, partition: int, seq: int, body: str | Mapping[str, Any], keep: int = 2
    ) -> None:
        """Store the state after ``seq``; the partition's older snapshots beyond ``keep`` go."""
        store_snapshot(self.state, partition, seq, body, keep)

    async def latest_snapshot(self, partition: int) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot of ``partition`` as (seq, body), or None."""
        kept = self.state.snapshots.get(partition)
        if not kept:
            return None
        seq = max(kept)
        return seq, json.loads(kept[seq])


class MemoryOffers:
    """The offers of a ``MatchingState``."""

    def __init__(self, state: MatchingState) -> None:
        self.state = state

    async def revision(self, offer_id: str) -> int | None:
        """The last revision of the offer the book was given, or None."""
        known = self.state.offers.get(offer_id)
        return None if known is None else known[2]

    async def save(self, offer_id: str, seller_id: str, gpu: str, revision: int) -> None:
        """Remember the owner (kept from the first save) and the revision."""
        known = self.state.offers.get(offer_id)
        owner = (seller_id, gpu) if known is None else (known[0], known[1])
        self.state.offers[offer_id] = (*owner, revision)

    async def owners(self, offer_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(seller id, gpu) of each known offer."""
        offers = self.state.offers
        return {i: (offers[i][0], offers[i][1]) for i in offer_ids if i in offers}


class MemoryOrders:
    """The orders of a ``MatchingState``."""

    def __init__(self, state: MatchingState) -> None:
        self.state = state

    async def known(self, order_id: str) -> bool:
        """Whether the book was already given this order."""
        return order_id in self.state.orders

    async def save(self, order_id: str, buyer_id: str, gpu: str) -> None:
        """Remember the order (the first save wins)."""
        self.state.orders.setdefault(order_id, (buyer_id, gpu))

    async def owners(self, order_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(buyer id, gpu) of each known order."""
        orders = self.state.orders
        return {i: orders[i] for i in order_ids if i in orders}


class MemoryMarketStates:
    """The market states of a ``MatchingState``."""

    def __init__(self, state: MatchingState) -> None:
        self.state = state

    async def record(self, changed: MarketStateChanged) -> None:
        """Keep the change unless the scope holds a newer one."""
        stored = self.state.market.get(changed.scope)
        if stored is None or stored[2] <= changed.changed_at:
            self.state.market[changed.scope] = (
                changed.state.value,
                changed.reason,
                changed.changed_at,
            )

    async def halted(self, gpu: str) -> bool:
        """True while the whole market or this GPU model is halted."""
        halted = MarketState.HALTED.value
        return any(
            scope in (ALL_GPUS, gpu) and state == halted
            for scope, (state, _, _) in self.state.market.items()
        )
