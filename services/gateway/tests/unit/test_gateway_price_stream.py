"""The price stream's rules: changes only, and timeouts that fit from Redis to the client."""

from __future__ import annotations

import json

from gpux_gateway.streams.changes import Changes
from gpux_gateway.streams.feed import BLOCK_MS
from gpux_gateway.streams.service import CLIENT_SILENCE_S, HEARTBEAT_S, start_after
from gpux_platform.cache import READ_TIMEOUT_S


def quote(gpu: str, price: str, as_of: str, region: str = "*") -> str:
    best = {"price": price}
    return json.dumps(
        {"gpu": gpu, "tier": "on_demand", "region": region, "best": best, "as_of": as_of}
    )


def test_a_quote_that_says_the_same_at_another_time_is_not_a_change() -> None:
    changes = Changes()
    assert changes.is_new(quote("a", "0.5", "t1"))
    assert not changes.is_new(quote("a", "0.5", "t2"))
    assert changes.is_new(quote("a", "0.4", "t3"))
    assert changes.is_new(quote("a", "0.5", "t4"))  # back to an earlier price: a change


def test_each_book_and_region_is_its_own_key() -> None:
    changes = Changes([quote("a", "0.5", "t1")])
    assert changes.is_new(quote("b", "0.5", "t1"))
    assert changes.is_new(quote("a", "0.5", "t1", region="eu"))
    assert not changes.is_new(quote("a", "0.5", "t2"))  # seeded: what the client last saw


def test_data_that_is_not_a_quote_passes_unless_repeated() -> None:
    changes = Changes()
    assert changes.is_new("not json")
    assert not changes.is_new("not json")
    assert changes.is_new("[1]")


def test_a_blocking_read_never_outlasts_the_redis_reply_timeout() -> None:
    assert BLOCK_MS / 1000 < READ_TIMEOUT_S
    assert HEARTBEAT_S < CLIENT_SILENCE_S


def test_a_stream_starts_after_a_well_formed_last_event_id_or_from_now() -> None:
    assert start_after("1700000000000-3") == "1700000000000-3"
    assert start_after("garbage") == "$"
    assert start_after(None) == "$"
