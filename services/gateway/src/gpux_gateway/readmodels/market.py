"""The gateway's view of market sessions, rebuilt from the compacted ``market.sessions`` topic.

Like the catalog view, read whole without a consumer group (``keyed``): every replica holds
the latest record per scope. No record for a scope means open; a tombstone removes its scope
(back to open).
"""

from __future__ import annotations

from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_gateway.readmodels.keyed import KeyedView


class MarketView(KeyedView[MarketStateChanged]):
    """The latest market state per scope (``*`` or a GPU id), kept in memory."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic, MarketStateChanged, "scope")

    def key_of(self, payload: MarketStateChanged) -> str:
        """A state is kept under its scope."""
        return payload.scope

    def state(self, scope: str) -> MarketState:
        """The state of one scope as published (open when nothing was)."""
        changed = self._held.get(scope)
        return MarketState.OPEN if changed is None else changed.state

    def all_state(self) -> MarketState:
        """The state of the whole market."""
        return self.state(ALL_GPUS)

    def gpu_states(self) -> dict[str, MarketState]:
        """Every GPU model with a published state of its own, by id."""
        return {s: c.state for s, c in sorted(self._held.items()) if s != ALL_GPUS}
