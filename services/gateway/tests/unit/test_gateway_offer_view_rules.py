"""How the seller's view of an offer follows reports read in any order: never backwards."""

from __future__ import annotations

import pytest

from gpux_contracts.offers import OfferStatus
from gpux_gateway.domain.offers import CLOSED, Standing, after_report, change_applies

pytestmark = pytest.mark.unit

LIVE = Standing("live", 3, None)


def test_a_closed_offer_stays_as_it_closed() -> None:
    for closed in CLOSED:
        held = Standing(closed, 0, None)
        for status in OfferStatus:
            assert after_report(held, Standing(status.value, 4, None)) is None
    assert {s.value for s in OfferStatus} >= CLOSED  # the contract's names


def test_nothing_goes_back_to_pending() -> None:
    assert after_report(Standing("accepted", 4, None), Standing("pending", 4, None)) is None


def test_pricing_accepting_a_change_leaves_a_live_offer_live_with_the_books_gpus() -> None:
    accepted = after_report(LIVE, Standing("accepted", 8, None))
    assert accepted == LIVE
    refused = after_report(LIVE, Standing("accepted", 4, "price_out_of_band"))
    assert refused == Standing("live", 3, "price_out_of_band")  # the seller sees why


def test_other_reports_are_taken_as_they_come() -> None:
    pending = Standing("pending", 4, None)
    assert after_report(pending, Standing("live", 4, None)) == Standing("live", 4, None)
    assert after_report(pending, Standing("accepted", 4, None)) == Standing("accepted", 4, None)
    assert after_report(LIVE, Standing("live", 1, None)) == Standing("live", 1, None)
    assert after_report(LIVE, Standing("exhausted", 0, None)) == Standing("exhausted", 0, None)
    rejected = Standing("rejected", 0, "unknown_gpu")
    assert after_report(pending, rejected) == rejected


def test_a_change_shows_only_from_a_later_revision_of_an_open_offer() -> None:
    assert change_applies(held_status="live", held_revision=1, revision=2)
    assert not change_applies(held_status="live", held_revision=2, revision=2)
    assert not change_applies(held_status="live", held_revision=3, revision=2)
    assert not change_applies(held_status="withdrawn", held_revision=1, revision=2)
