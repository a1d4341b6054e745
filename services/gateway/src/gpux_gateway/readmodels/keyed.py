"""A view of one compacted topic of one payload type: the latest record per key, in memory.

Read whole without a consumer group (see ``gpux_platform.compacted``), so every replica holds
the whole state. A record it cannot read (no key, bad data, another payload type, or a
payload that names another key) is logged and skipped, and the key keeps what it held; a
tombstone removes its key. Ready once it has read up to the end offsets found at start-up.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Generic, TypeVar

from gpux_contracts.events import EventCodec, Payload
from gpux_platform.compacted import CompactedView

P = TypeVar("P", bound=Payload)


class KeyedView(CompactedView, Generic[P]):
    """The latest ``P`` per key of one topic; ``noun`` names what a key stands for."""

    def __init__(self, topic: str, payload_type: type[P], noun: str) -> None:
        super().__init__(topic)
        self._type = payload_type
        self._noun = noun
        self._codec: EventCodec[Any] = EventCodec(payload_type)
        self._held: dict[str, P] = {}

    @abstractmethod
    def key_of(self, payload: P) -> str:
        """The key a payload belongs under."""

    def _keep(self, key: str, payload: P) -> None:
        """Hold a payload read under its own key (the newest read wins unless overridden)."""
        self._held[key] = payload

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record into the view (never raises on bad data)."""
        self._read(topic, partition, offset)
        if key is None:
            self._reject(topic, offset, "a record without a key")
            return
        name = key.decode(errors="replace")
        if value is None:
            self._held.pop(name, None)
            return
        try:
            payload = self._codec.decode(value).payload
        except ValueError as exc:
            self._reject(topic, offset, repr(exc))
            return
        if not isinstance(payload, self._type) or self.key_of(payload) != name:
            self._reject(topic, offset, f"a record for another {self._noun} under key {name!r}")
            return
        self._keep(name, payload)
