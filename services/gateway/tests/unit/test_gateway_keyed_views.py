"""The market-sessions and order-book views: the latest record per key, bad records skipped
(the key keeps what it held), tombstones removing their key, and no older book level kept."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gpux_contracts.book import BookLevelsChanged
from gpux_contracts.events import Payload, wrap
from gpux_contracts.market import MarketState, MarketStateChanged
from gpux_gateway.readmodels.keyed import KeyedView
from gpux_gateway.readmodels.market import MarketView
from gpux_gateway.readmodels.orderbook import BookView
from gpux_platform.broker import encode

pytestmark = pytest.mark.unit

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def feed(view: KeyedView[Any], *records: tuple[str | None, Payload | bytes | None]) -> None:
    """Apply ``(key, payload or raw value or tombstone)`` records at offsets 0, 1, ..."""
    for offset, (key, value) in enumerate(records):
        raw = (
            encode(wrap(value, producer="t", occurred_at=NOW))
            if isinstance(value, Payload)
            else value
        )
        view.apply("t", 0, offset, None if key is None else key.encode(), raw)


def halted(scope: str) -> MarketStateChanged:
    return MarketStateChanged(
        scope=scope, state=MarketState.HALTED, changed_at=NOW, changed_by="admin"
    )


def levels(sequence: int) -> BookLevelsChanged:
    return BookLevelsChanged(
        gpu="rtx-4090", tier="on_demand", bids=[], asks=[], depth=5, sequence=sequence, as_of=NOW
    )


def test_the_market_view_keeps_each_scopes_state_and_skips_what_it_cannot_read() -> None:
    view = MarketView("t")
    feed(
        view,
        ("*", halted("*")),
        ("h100", halted("h100")),
        (None, halted("a100")),  # no key
        ("a100", halted("h100")),  # another scope's state
        ("*", b"not json"),
        ("l40s", levels(1)),  # another payload type
        ("h100", None),  # a tombstone: back to open
    )
    assert view.all_state() is MarketState.HALTED
    assert view.state("h100") is MarketState.OPEN
    assert view.gpu_states() == {}
    assert view.rejected == 4


def test_the_book_view_never_goes_back_to_an_older_sequence() -> None:
    view = BookView("t")
    feed(view, ("rtx-4090|on_demand", levels(5)), ("rtx-4090|on_demand", levels(3)))
    held = view.book("rtx-4090", "on_demand")
    assert held is not None
    assert held.sequence == 5
    feed(view, ("rtx-4090|spot", levels(6)), ("rtx-4090|on_demand", None))
    assert view.book("rtx-4090", "on_demand") is None
    assert view.rejected == 1
