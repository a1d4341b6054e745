"""The account events' cursor (``<txid>.<seq>``) and where a stream starts."""

from __future__ import annotations

import pytest

from gpux_gateway.notifications.cursor import MAX_SEQ, MAX_TXID, START, Cursor, CursorError
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
