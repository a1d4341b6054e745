"""The gateway's view of market sessions, rebuilt from the compacted ``market.sessions`` topic.

Like the catalog view, read whole without a consumer group (see ``gpux_platform.compacted``),
so every replica holds the whole state (the latest record per scope). No record for a scope
means open. A record it cannot read is logged and skipped (the previous state of that scope
stays); a tombstone removes its scope (back to open). Ready once it has read up to the end
offsets found at start-up.
"""

from __future__ import annotations

from typing import Any

from gpux_contracts.events import EventCodec
from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_platform.compacted import CompactedView


class MarketView(CompactedView):
    """The latest market state per scope (``*`` or a GPU id), kept in memory."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic)
        self._codec: EventCodec[Any] = EventCodec(MarketStateChanged)
        self._states: dict[str, MarketStateChanged] = {}

    def state(self, scope: str) -> MarketState:
        """The state of one scope as published (open when nothing was)."""
        changed = self._states.get(scope)
        return MarketState.OPEN if changed is None else changed.state

    def all_state(self) -> MarketState:
        """The state of the whole market."""
        return self.state(ALL_GPUS)

    def gpu_states(self) -> dict[str, MarketState]:
        """Every GPU model with a published state of its own, by id."""
        return {s: c.state for s, c in sorted(self._states.items()) if s != ALL_GPUS}

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record into the view (never raises on bad data)."""
        self._read(topic, partition, offset)
        if key is None:
            self._reject(topic, offset, "a record without a key")
            return
        scope = key.decode(errors="replace")
        if value is None:
            self._states.pop(scope, None)
            return
        try:
            payload = self._codec.decode(value).payload
        except ValueError as exc:
            self._reject(topic, offset, repr(exc))
            return
        if not isinstance(payload, MarketStateChanged) or payload.scope != scope:
            self._reject(topic, offset, f"a record for another scope under key {scope!r}")
            return
        self._states[scope] = payload
