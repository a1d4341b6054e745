"""The payout rules (``domain.payouts``): refusals and the transfers, balanced."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpux_billing.domain import payouts
from gpux_billing.domain.ledger import PLATFORM, AccountKind, TransferKind
from gpux_billing.domain.payouts import Payout
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutMethod, PayoutRejection, PayoutStatus

pytestmark = pytest.mark.unit

AT = datetime(2026, 12, 1, tzinfo=UTC)
PAYOUT = Payout(
    "p1", "s1", Currency.EUR, 50_000_000, PayoutMethod.MANUAL, "IBAN", PayoutStatus.PENDING, AT, AT
)


@pytest.mark.parametrize(
    ("amount", "minimum", "payable", "expected"),
    [
        (10_000_000, 10_000_000, 10_000_000, None),
        (9_999_999, 10_000_000, 50_000_000, PayoutRejection.BELOW_MINIMUM),
        (0, 0, 50_000_000, PayoutRejection.BELOW_MINIMUM),
        (10_000_001, 10_000_000, 10_000_000, PayoutRejection.INSUFFICIENT_SELLER_PAYABLE),
        (5_000_000, 10_000_000, 0, PayoutRejection.BELOW_MINIMUM),  # the minimum comes first
    ],
)
def test_refusal(amount: int, minimum: int, payable: int, expected: PayoutRejection | None) -> None:
    assert payouts.refusal(amount, minimum, payable) == expected


def test_the_requested_transfer_moves_the_payable_to_the_sellers_transit() -> None:
    transfer = payouts.requested_transfer(PAYOUT)
    assert (transfer.id, transfer.kind) == ("payout:p1", TransferKind.PAYOUT)
    moves = {(e.account.owner, e.account.kind): e.amount_micros for e in transfer.entries}
    assert moves == {
        ("s1", AccountKind.SELLER_PAYABLE): -50_000_000,
        ("s1", AccountKind.PAYOUTS_IN_TRANSIT): 50_000_000,
    }


def test_the_paid_transfer_moves_transit_to_the_platforms_paid_out() -> None:
    transfer = payouts.paid_transfer(PAYOUT, AT, "BANK-1")
    assert (transfer.id, transfer.kind) == ("payout-paid:p1", TransferKind.PAYOUT_PAID)
    moves = {(e.account.owner, e.account.kind): e.amount_micros for e in transfer.entries}
    assert moves == {
        ("s1", AccountKind.PAYOUTS_IN_TRANSIT): -50_000_000,
        (PLATFORM, AccountKind.PAID_OUT): 50_000_000,
    }
    assert transfer.reference == "payout p1 paid: BANK-1"


def test_the_returned_transfer_reverses_the_request() -> None:
    transfer = payouts.returned_transfer(PAYOUT, AT)
    requested = payouts.requested_transfer(PAYOUT)
    assert transfer.kind is TransferKind.CORRECTION
    assert sorted(e.amount_micros for e in transfer.entries) == sorted(
        -e.amount_micros for e in requested.entries
    )


def test_paid_out_is_the_platforms_and_floored_in_transit_is_the_sellers() -> None:
    assert AccountKind.PAID_OUT.platform_owned
    assert AccountKind.PAID_OUT.floored
    assert not AccountKind.PAYOUTS_IN_TRANSIT.platform_owned
    assert AccountKind.PAYOUTS_IN_TRANSIT.floored
