"""Seller payouts: whether a request is paid out, and the transfers that pay it (pure).

A seller asks for an amount in one currency. It is refused ``below_minimum`` under the
minimum (``GPUX_PAYOUT_MINIMUM``, the same number in every currency) and
``insufficient_seller_payable`` when the seller's ``seller_payable`` balance in that currency
does not cover it; otherwise the amount moves to the seller's ``payouts_in_transit``
(``payout:<id>``, kind ``payout``) and the payout is ``pending``. The admin's confirmation
moves it on to the platform's ``paid_out`` (``payout-paid:<id>``, kind ``payout_paid``):
``paid``. An admin's rejection of a pending payout moves it back (``payout-returned:<id>``,
a ``correction`` reversing the first transfer): ``rejected``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpux_billing.domain.ledger import AccountKey, AccountKind, Entry, Transfer, TransferKind
from gpux_billing.domain.transfers import Between, platform_account, reversal
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutMethod, PayoutRejection, PayoutStatus

DEFAULT_MINIMUM_MICROS = 10_000_000
"""``GPUX_PAYOUT_MINIMUM``'s default, 10.00 in micro-units."""


@dataclass(frozen=True, slots=True)
class Payout:
    """A payout as billing keeps it."""

    id: str
    seller_id: str
    currency: Currency
    amount_micros: int
    method: PayoutMethod
    destination: str
    status: PayoutStatus
    requested_at: datetime
    updated_at: datetime
    reason: PayoutRejection | None = None
    reference: str = ""
    decided_by: str | None = None


def refusal(amount_micros: int, minimum_micros: int, payable_micros: int) -> PayoutRejection | None:
    """Why a request for ``amount_micros`` is refused (None: it is paid out), given the
    minimum and the seller's ``seller_payable`` balance in the payout's currency."""
    if amount_micros < max(minimum_micros, 1):
        return PayoutRejection.BELOW_MINIMUM
    if amount_micros > payable_micros:
        return PayoutRejection.INSUFFICIENT_SELLER_PAYABLE
    return None


def payable_account(seller_id: str, currency: Currency) -> AccountKey:
    """The seller's ``seller_payable`` account in a currency."""
    return AccountKey(seller_id, currency, AccountKind.SELLER_PAYABLE)


_to_transit = Between(
    TransferKind.PAYOUT, AccountKind.SELLER_PAYABLE, AccountKind.PAYOUTS_IN_TRANSIT
)


def requested_transfer(payout: Payout) -> Transfer:
    """``payout:<id>``: the seller's payable to its payouts in transit, at the request's time."""
    return _to_transit(
        f"payout:{payout.id}",
        payout.seller_id,
        payout.currency,
        payout.amount_micros,
        payout.requested_at,
        reference=f"payout {payout.id} ({payout.method.value}) to {payout.destination}"[:200],
    )


def paid_transfer(payout: Payout, at: datetime, reference: str) -> Transfer:
    """``payout-paid:<id>``: the seller's payouts in transit to the platform's paid out."""
    source = AccountKey(payout.seller_id, payout.currency, AccountKind.PAYOUTS_IN_TRANSIT)
    target = platform_account(payout.currency, AccountKind.PAID_OUT)
    amount = payout.amount_micros
    note = f"payout {payout.id} paid" + (f": {reference}" if reference else "")
    return Transfer(
        f"payout-paid:{payout.id}",
        TransferKind.PAYOUT_PAID,
        (Entry(source, -amount), Entry(target, amount)),
        at,
        reference=note[:200],
    )


def returned_transfer(payout: Payout, at: datetime) -> Transfer:
    """``payout-returned:<id>``: a rejected pending payout back to the seller's payable."""
    return reversal(requested_transfer(payout), f"payout-returned:{payout.id}", at)
