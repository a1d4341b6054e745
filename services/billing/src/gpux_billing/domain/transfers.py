"""Builders for the standard transfers: each returns a valid ``Transfer`` or raises.

Amounts given to a builder are positive integer micro-units; the builder picks the signs.
Legs that would be zero (a 0 % fee, a 100 % fee) are left out rather than posted as zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpux_billing.domain.amounts import convert, fee_split
from gpux_billing.domain.ledger import (
    PLATFORM,
    AccountKey,
    AccountKind,
    Entry,
    FxQuote,
    RejectionReason,
    Transfer,
    TransferInvalid,
    TransferKind,
    as_currency,
)
from gpux_contracts.money import Currency


def _positive(amount_micros: int) -> int:
    if type(amount_micros) is not int or amount_micros <= 0:
        raise TransferInvalid(
            RejectionReason.AMOUNT_NOT_POSITIVE, f"amount {amount_micros!r} is not a positive int"
        )
    return amount_micros


def _move(source: AccountKey, target: AccountKey, amount_micros: int) -> tuple[Entry, Entry]:
    return Entry(source, -amount_micros), Entry(target, amount_micros)


def platform_account(currency: Currency | str, kind: AccountKind) -> AccountKey:
    """The platform's account of a kind in a currency."""
    return AccountKey(PLATFORM, as_currency(currency), kind)


@dataclass(frozen=True, slots=True)
class Between:
    """A builder of the transfers that move an owner's money from one of its balances to
    another (``from_platform``: in from the platform's account of the ``source`` kind)."""

    kind: TransferKind
    source: AccountKind
    target: AccountKind
    from_platform: bool = False

    def __call__(
        self,
        transfer_id: str,
        owner: str,
        currency: Currency | str,
        amount_micros: int,
        created_at: datetime,
        *,
        reference: str = "",
    ) -> Transfer:
        """``amount_micros`` of ``currency`` from the source balance to the target one."""
        source = AccountKey(
            PLATFORM if self.from_platform else owner, as_currency(currency), self.source
        )
        target = AccountKey(owner, source.currency, self.target)
        entries = _move(source, target, _positive(amount_micros))
        return Transfer(transfer_id, self.kind, entries, created_at, reference=reference)


topup = Between(
    TransferKind.TOPUP, AccountKind.TOPUP_CLEARING, AccountKind.AVAILABLE, from_platform=True
)
"""Money came in for ``owner``: top-up clearing to the owner's available balance."""
hold = Between(TransferKind.HOLD, AccountKind.AVAILABLE, AccountKind.HELD)
"""Reserve funds: the owner's available balance to its held balance."""
release = Between(TransferKind.RELEASE, AccountKind.HELD, AccountKind.AVAILABLE)
"""Give reserved funds back: the owner's held balance to its available balance."""


@dataclass(frozen=True, slots=True)
class Sale:
    """A buyer owes a seller ``amount_micros`` of ``currency`` (the offer's) for delivered hours."""

    buyer: str
    seller: str
    currency: Currency | str
    amount_micros: int


@dataclass(frozen=True, slots=True)
class Payment:
    """How a sale is paid: ``fee`` of its amount to the platform, ``paid`` by the buyer in its
    wallet's currency, ``from_held`` of that from the buyer's held balance (the rest from its
    available balance)."""

    fee_micros: int
    paid_micros: int
    from_held_micros: int


def charge(
    transfer_id: str,
    sale: Sale,
    fee_bps: int,
    created_at: datetime,
    *,
    source: AccountKind = AccountKind.HELD,
    fx: FxQuote | None = None,
    reference: str = "",
) -> Transfer:
    """The buyer pays the sale's amount for delivered hours.

    The seller's payable gets the amount minus the fee (``fee_bps`` of it, rounded by the
    one rule) and the platform's revenue gets the fee, so the parts sum exactly. The buyer
    pays from ``source`` (held by default; available for charges without a hold). With
    ``fx`` (base: the offer's currency, quote: the buyer's wallet currency) the buyer pays
    the converted amount in its wallet currency, through the FX house accounts.
    """
    if source not in (AccountKind.HELD, AccountKind.AVAILABLE):
        raise ValueError(f"a buyer pays from its held or available balance, not {source}")
    amount = _positive(sale.amount_micros)
    _, fee_micros = fee_split(amount, fee_bps)
    paid = amount if fx is None else convert(amount, fx.rate)
    payment = Payment(fee_micros, paid, paid if source is AccountKind.HELD else 0)
    return lease_charge(transfer_id, sale, payment, created_at, fx=fx, reference=reference)


def lease_charge(
    transfer_id: str,
    sale: Sale,
    payment: Payment,
    created_at: datetime,
    *,
    fx: FxQuote | None = None,
    reference: str = "",
) -> Transfer:
    """A charge with its parts given: the buyer pays ``paid`` for the sale's amount.

    The seller's payable gets ``amount - fee`` and the platform's revenue ``fee``. With ``fx``
    (base: the offer's currency, quote: the wallet's) ``paid`` is in the wallet's currency and
    the FX house accounts take the difference; without it ``paid`` must equal ``amount``.
    """
    offer_currency = as_currency(sale.currency)
    amount = _positive(sale.amount_micros)
    fee_micros, paid_micros, from_held = (
        payment.fee_micros,
        payment.paid_micros,
        payment.from_held_micros,
    )
    if not 0 <= fee_micros <= amount or not 0 <= from_held <= paid_micros:
        raise TransferInvalid(
            RejectionReason.AMOUNT_NOT_POSITIVE,
            f"fee {fee_micros} of {amount} or {from_held} held of {paid_micros}",
        )
    wallet = offer_currency if fx is None else fx.quote
    if fx is None and paid_micros != amount:
        raise TransferInvalid(RejectionReason.UNBALANCED, "paid differs from the amount")
    if fx is not None and fx.base != offer_currency:
        raise TransferInvalid(
            RejectionReason.FX_CURRENCIES, f"the quote's base must be {offer_currency.value}"
        )
    if paid_micros == 0:
        raise TransferInvalid(
            RejectionReason.AMOUNT_ZERO, f"{amount} micros round to nothing in {wallet.value}"
        )
    buyer, seller = sale.buyer, sale.seller
    debits = [
        Entry(AccountKey(buyer, wallet, AccountKind.HELD), -from_held),
        Entry(AccountKey(buyer, wallet, AccountKind.AVAILABLE), from_held - paid_micros),
    ]
    if fx is not None:
        debits += [
            Entry(platform_account(wallet, AccountKind.FX_HOUSE), paid_micros),
            Entry(platform_account(offer_currency, AccountKind.FX_HOUSE), -amount),
        ]
    credits = [
        Entry(AccountKey(seller, offer_currency, AccountKind.SELLER_PAYABLE), amount - fee_micros),
        Entry(platform_account(offer_currency, AccountKind.PLATFORM_REVENUE), fee_micros),
    ]
    entries = tuple(e for e in (*debits, *credits) if e.amount_micros != 0)
    return Transfer(transfer_id, TransferKind.CHARGE, entries, created_at, fx, reference)


def exchange(
    transfer_id: str,
    source: AccountKey,
    target: AccountKey,
    amount_micros: int,
    fx: FxQuote,
    *,
    created_at: datetime,
    reference: str = "",
) -> Transfer:
    """Convert ``amount_micros`` of the source's currency into the target's, at ``fx``.

    The source pays the FX house of its currency; the FX house of the target's currency pays
    the target the converted amount (rounded by the one rule). ``fx.base`` must be the
    source's currency and ``fx.quote`` the target's.
    """
    amount = _positive(amount_micros)
    if (fx.base, fx.quote) != (source.currency, target.currency):
        raise TransferInvalid(
            RejectionReason.FX_CURRENCIES,
            f"{source.currency.value} to {target.currency.value} needs that quote, not"
            f" {fx.base.value}/{fx.quote.value}",
        )
    converted = convert(amount, fx.rate)
    entries = (
        *_move(source, platform_account(source.currency, AccountKind.FX_HOUSE), amount),
        *_move(platform_account(target.currency, AccountKind.FX_HOUSE), target, converted),
    )
    return Transfer(transfer_id, TransferKind.FX, entries, created_at, fx, reference)


def reversal(
    original: Transfer, transfer_id: str, created_at: datetime, reference: str = ""
) -> Transfer:
    """A correction that undoes ``original``: every entry negated, the same FX quote."""
    entries = tuple(Entry(e.account, -e.amount_micros) for e in original.entries)
    note = reference or f"reverses {original.id}"
    return Transfer(transfer_id, TransferKind.CORRECTION, entries, created_at, original.fx, note)
