"""The account events' cursor (``<txid>.<seq>``) and where a stream starts."""

from __future__ import annotations

import pytest

from gpux_gateway.notifications.cursor import (
    MAX_SEQ,
    MAX_TXID,
    START,
    Cursor,
    CursorError,
    Snapshot,
)
from gpux_gateway.notifications.service import start_at
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit


def test_a_cursor_reads_back_as_it_is_written() -> None:
    for cursor in (Cursor(0, 0), Cursor(812, 31), Cursor(MAX_TXID, MAX_SEQ)):
        assert Cursor.parse(str(cursor)) == cursor
    assert str(Cursor(812, 31)) == "812.31"


def test_cursors_order_by_transaction_then_seq() -> None:
    assert Cursor(5, 900) < Cursor(6, 1) < Cursor(6, 2)
    assert Cursor(1, 1) > START


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1",
        "1.",
        ".1",
        "1.2.3",
        "a.b",
        "-1.2",
        "1.-2",
        " 1.2",
        "1.2 ",
        "1,2",
        "0x1.2",
        "1.2\n",
        "\u0661.\u0662",
    ],
)
def test_a_cursor_of_another_form_is_refused(text: str) -> None:
    with pytest.raises(CursorError):
        Cursor.parse(text)


def test_a_cursor_out_of_range_is_refused() -> None:
    with pytest.raises(CursorError):
        Cursor.parse(f"{MAX_TXID + 1}.1")
    with pytest.raises(CursorError):
        Cursor.parse(f"1.{MAX_SEQ + 1}")


def test_a_stream_starts_after_the_header_then_the_query_else_now_or_the_start() -> None:
    assert start_at("7.3", "9.9", from_start=True) == Cursor(7, 3)
    assert start_at(None, "9.9", from_start=False) == Cursor(9, 9)
    assert start_at(None, None, from_start=False) is None
    assert start_at(None, None, from_start=True) == START
    with pytest.raises(ProblemError) as refused:
        start_at("bogus", None, from_start=False)
    assert refused.value.status == 400


def test_a_snapshot_reads_as_postgresql_writes_it_and_says_what_had_committed() -> None:
    idle = Snapshot.parse("812:812:")
    assert idle == Snapshot(812, 812, frozenset())
    assert (idle.committed(811), idle.committed(812)) == (True, False)
    busy = Snapshot.parse("800:812:800,805")
    assert busy.running == frozenset({800, 805})
    assert busy.cursor == Cursor(800, 0)
    committed = [t for t in range(798, 814) if busy.committed(t)]
    assert committed == [798, 799, 801, 802, 803, 804, 806, 807, 808, 809, 810, 811]
    for text in ("", "1:2", "1:2:x", "1:2:3,", "-1:2:", "1:2:3 "):
        with pytest.raises(ValueError, match="not a snapshot"):
            Snapshot.parse(text)
