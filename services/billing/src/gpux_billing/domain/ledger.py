"""The double-entry ledger's vocabulary and its rules for one transfer (pure, no I/O, no clock).

Sign convention: an entry's amount is signed integer micro-units; a positive amount adds
to the account's balance, a negative one takes from it. A balance is the sum of its
account's entries. Every transfer's entries sum to zero in each currency, so money is only
ever moved, never made: the sum of all entries is zero per currency.

A ``Transfer`` cannot be built unless it passes every rule here (``first_violation``); the
rules are checked in the order of ``RejectionReason``, and the first broken one is reported.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from gpux_billing.domain.amounts import convert
from gpux_contracts.money import Currency

PLATFORM = "platform"
"""The owner of the platform-wide accounts (revenue, FX house, top-up clearing)."""
MAX_ENTRY_MICROS = 10**15
"""Largest magnitude of one entry: a billion currency units, far inside a bigint's range."""
MAX_ENTRIES = 32
"""Most entries one transfer may have (a cross-currency charge with a fee has five)."""
MAX_REFERENCE_CHARS = 200
MAX_RATE_DIGITS = 28
"""Significant digits of an FX rate: Decimal's default precision, enough for any cross rate."""

Wallet = tuple[str, Currency]
"""An owner's wallet in one currency: its available and held accounts."""

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@functools.lru_cache(maxsize=1 << 14)
def _valid_owner(owner: str) -> bool:
    """Whether an owner is well formed (cached: a pure test of the string, and the same
    owners, the platform's and the sellers', recur in every charge of a batch)."""
    return _OWNER.fullmatch(owner) is not None


def _printable(text: str) -> bool:
    """Whether ``text`` has no control character (C0, DEL, C1): printable ASCII, the usual
    reference, has none and needs no regex; anything else is searched."""
    return (text.isascii() and text.isprintable()) or _CONTROL.search(text) is None


class AccountKind(StrEnum):
    """What an account holds; an owner has at most one account per (currency, kind)."""

    AVAILABLE = "available"
    """A wallet's spendable balance; never below zero."""
    HELD = "held"
    """Funds reserved for an order or a running lease; never below zero."""
    SELLER_PAYABLE = "seller_payable"
    """What the platform owes a seller for delivered hours; never below zero."""
    PLATFORM_REVENUE = "platform_revenue"
    """Fees the platform earned (owner ``platform``); negative only through corrections."""
    FX_HOUSE = "fx_house"
    """The platform's currency desk, one per currency (owner ``platform``); may be negative."""
    TOPUP_CLEARING = "topup_clearing"
    """Money that came in from outside, one per currency (owner ``platform``); negative."""
    PAYOUTS_IN_TRANSIT = "payouts_in_transit"
    """A seller's payouts on their way (taken from its payable, not yet confirmed paid);
    never below zero."""
    PAID_OUT = "paid_out"
    """Money paid out of gpux to sellers, one per currency (owner ``platform``); never below
    zero."""

    @property
    def platform_owned(self) -> bool:
        """Whether only the ``platform`` owner has accounts of this kind."""
        return self in _PLATFORM_KINDS

    @property
    def floored(self) -> bool:
        """Whether the balance may never go below zero."""
        return self not in _UNFLOORED_KINDS


_UNFLOORED_KINDS = frozenset(
    {AccountKind.PLATFORM_REVENUE, AccountKind.FX_HOUSE, AccountKind.TOPUP_CLEARING}
)
_PLATFORM_KINDS = _UNFLOORED_KINDS | {AccountKind.PAID_OUT}


class TransferKind(StrEnum):
    """Why money moved."""

    TOPUP = "topup"
    """Money came in: top-up clearing to a wallet's available balance."""
    HOLD = "hold"
    """Available to held: funds reserved for an order or a lease period."""
    RELEASE = "release"
    """Held back to available: a cancelled, expired or unfilled reservation."""
    CHARGE = "charge"
    """A buyer paid for delivered hours: to the seller's payable and the platform's fee."""
    FEE = "fee"
    """A platform fee booked on its own (not part of a charge)."""
    PAYOUT = "payout"
    """A seller's payout requested: its payable to its payouts in transit."""
    PAYOUT_PAID = "payout_paid"
    """A seller's payout confirmed paid: its payouts in transit to the platform's paid out."""
    FX = "fx"
    """A currency exchange through the FX house accounts."""
    CORRECTION = "correction"
    """Undoes or amends earlier transfers; entries are never edited."""


class RejectionReason(StrEnum):
    """Why the ledger refused a transfer, in order of precedence (the first one found wins)."""

    KIND_UNKNOWN = "kind_unknown"
    """A transfer kind, account kind or currency the ledger does not know."""
    AMOUNT_NOT_POSITIVE = "amount_not_positive"
    """A builder was given an amount that is not a positive integer (before any entry exists)."""
    ID_INVALID = "id_invalid"
    """The id is not 1-128 characters of letters, digits and ``._:-`` (starting alphanumeric)."""
    TIMESTAMP_NOT_AWARE = "timestamp_not_aware"
    """``created_at`` (or an FX rate's timestamp) has no time zone."""
    REFERENCE_INVALID = "reference_invalid"
    """The reference is longer than 200 characters or holds control characters."""
    ENTRIES_COUNT = "entries_count"
    """Fewer than two entries, or more than 32."""
    OWNER_INVALID = "owner_invalid"
    """An owner is not 1-64 characters of letters, digits and ``._:-``."""
    OWNER_KIND_MISMATCH = "owner_kind_mismatch"
    """A platform kind owned by someone else, or a wallet kind owned by ``platform``."""
    ACCOUNTS_NOT_DISTINCT = "accounts_not_distinct"
    """The same account appears twice in one transfer."""
    AMOUNT_ZERO = "amount_zero"
    """An entry of zero (or not an integer)."""
    AMOUNT_TOO_LARGE = "amount_too_large"
    """An entry larger than 10**15 micro-units in magnitude."""
    UNBALANCED = "unbalanced"
    """The entries do not sum to zero in some currency."""
    FX_MISSING = "fx_missing"
    """Entries in two currencies without an FX quote (rate and timestamp)."""
    FX_UNEXPECTED = "fx_unexpected"
    """An FX quote on a transfer in one currency, or an FX transfer in one currency."""
    FX_CURRENCIES = "fx_currencies"
    """More than two currencies, or currencies other than the quote's base and quote."""
    FX_RATE_INVALID = "fx_rate_invalid"
    """The rate is not a positive finite decimal of at most 28 significant digits."""
    FX_HOUSE_MISSING = "fx_house_missing"
    """Not exactly one FX house entry per currency, or both on the same side."""
    FX_AMOUNT_MISMATCH = "fx_amount_mismatch"
    """The quote-side FX house amount is not the base-side amount times the rate, rounded."""
    ID_REUSED = "id_reused"
    """The id was already posted with different fields (an identical replay is not refused)."""
    INSUFFICIENT_FUNDS = "insufficient_funds"
    """The transfer would take an available, held or payable balance below zero."""


class LedgerError(Exception):
    """A transfer the ledger refuses; ``reason`` says why."""

    reason: RejectionReason

    def __init__(self, reason: RejectionReason, message: str) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason


class TransferInvalid(LedgerError):
    """The transfer breaks a rule by itself, whatever the ledger holds."""


class TransferMismatch(LedgerError):
    """The id was posted before with different fields: a replay must repeat them exactly."""

    def __init__(self, transfer_id: str, original: Transfer | None = None) -> None:
        super().__init__(
            RejectionReason.ID_REUSED, f"transfer {transfer_id} differs from the one posted"
        )
        self.transfer_id = transfer_id
        self.original = original


class InsufficientFunds(LedgerError):
    """Posting would take a floored account below zero; nothing was posted."""

    def __init__(self, account: AccountKey, balance_micros: int, delta_micros: int) -> None:
        self.account = account
        self.balance_micros = balance_micros
        self.delta_micros = delta_micros
        self.shortfall_micros = -(balance_micros + delta_micros)
        super().__init__(
            RejectionReason.INSUFFICIENT_FUNDS,
            f"{account} holds {balance_micros} micro-units and would move {delta_micros}"
            f" (short by {self.shortfall_micros})",
        )


def _coerce(enum: Any, value: Any, what: str) -> Any:
    if value.__class__ is enum:  # already a member: skip Enum.__call__ (slow, same result)
        return value
    try:
        return enum(value)
    except ValueError:
        raise TransferInvalid(RejectionReason.KIND_UNKNOWN, f"unknown {what} {value!r}") from None


def as_currency(value: Currency | str) -> Currency:
    """A currency the ledger knows, or ``TransferInvalid`` (``kind_unknown``)."""
    currency: Currency = _coerce(Currency, value, "currency")
    return currency


@dataclass(frozen=True, slots=True, order=True)
class AccountKey:
    """One account: (owner, currency, kind); created on first use, never removed."""

    owner: str
    currency: Currency
    kind: AccountKind

    def __post_init__(self) -> None:
        object.__setattr__(self, "currency", _coerce(Currency, self.currency, "currency"))
        object.__setattr__(self, "kind", _coerce(AccountKind, self.kind, "account kind"))

    def __str__(self) -> str:
        return f"{self.owner}/{self.currency.value}/{self.kind.value}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One leg of a transfer: a signed amount in micro-units on one account (+ adds, - takes)."""

    account: AccountKey
    amount_micros: int


@dataclass(frozen=True, slots=True)
class FxQuote:
    """One unit of ``base`` buys ``rate`` units of ``quote``, as of ``rate_at``."""

    base: Currency
    quote: Currency
    rate: Decimal
    rate_at: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", _coerce(Currency, self.base, "currency"))
        object.__setattr__(self, "quote", _coerce(Currency, self.quote, "currency"))
        if not isinstance(self.rate, Decimal):
            raise TransferInvalid(RejectionReason.FX_RATE_INVALID, "a rate must be a Decimal")

    @property
    def rate_text(self) -> str:
        """The rate as a canonical decimal string (no exponent, no trailing zeros)."""
        text = format(self.rate, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(frozen=True, slots=True)
class Transfer:
    """A movement of money: balanced entries under a caller-supplied id (the idempotency key)."""

    id: str
    kind: TransferKind
    entries: tuple[Entry, ...]
    created_at: datetime
    fx: FxQuote | None = None
    reference: str = ""
    _fingerprint: tuple[Any, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _coerce(TransferKind, self.kind, "transfer kind"))
        object.__setattr__(self, "entries", tuple(self.entries))
        violation = first_violation(self)
        if violation is not None:
            raise TransferInvalid(*violation)
        object.__setattr__(self, "_fingerprint", _fingerprint(self))

    def same_as(self, other: Transfer) -> bool:
        """Whether a replay repeats this transfer exactly (entry order aside)."""
        return self._fingerprint == other._fingerprint

    @property
    def currencies(self) -> frozenset[Currency]:
        """The currencies the entries are in."""
        return frozenset(e.account.currency for e in self.entries)


def _fingerprint(transfer: Transfer) -> tuple[Any, ...]:
    fx = transfer.fx
    return (
        transfer.id,
        transfer.kind,
        transfer.created_at,
        transfer.reference,
        None if fx is None else (fx.base, fx.quote, fx.rate, fx.rate_at),
        tuple(sorted((e.account, e.amount_micros) for e in transfer.entries)),
    )


Violation = tuple[RejectionReason, str]


def first_violation(transfer: Transfer) -> Violation | None:
    """The first rule (in ``RejectionReason`` order) the transfer breaks, or None."""
    for check in (_check_header, _check_entries, _check_balance, _check_fx):
        violation = check(transfer)
        if violation is not None:
            return violation
    return None


def _aware(moment: object) -> bool:
    return isinstance(moment, datetime) and moment.utcoffset() is not None


def _check_header(t: Transfer) -> Violation | None:
    if not isinstance(t.id, str) or not _ID.fullmatch(t.id):
        return RejectionReason.ID_INVALID, f"bad transfer id {str(t.id)[:40]!r}"
    if not _aware(t.created_at) or (t.fx is not None and not _aware(t.fx.rate_at)):
        return RejectionReason.TIMESTAMP_NOT_AWARE, "timestamps must carry a time zone"
    if (
        not isinstance(t.reference, str)
        or len(t.reference) > MAX_REFERENCE_CHARS
        or not _printable(t.reference)
    ):
        return RejectionReason.REFERENCE_INVALID, "reference: at most 200 printable characters"
    if not 2 <= len(t.entries) <= MAX_ENTRIES:
        return RejectionReason.ENTRIES_COUNT, f"{len(t.entries)} entries (2 to {MAX_ENTRIES})"
    return None


def _check_entries(t: Transfer) -> Violation | None:
    for entry in t.entries:
        owner = entry.account.owner
        if not isinstance(owner, str) or not _valid_owner(owner):
            return RejectionReason.OWNER_INVALID, f"bad owner {str(owner)[:40]!r}"
        if (owner == PLATFORM) != entry.account.kind.platform_owned:
            return RejectionReason.OWNER_KIND_MISMATCH, f"{entry.account}: owner and kind disagree"
    if len({e.account for e in t.entries}) != len(t.entries):
        return RejectionReason.ACCOUNTS_NOT_DISTINCT, "an account appears twice"
    for entry in t.entries:
        amount = entry.amount_micros
        if type(amount) is not int or amount == 0:
            return RejectionReason.AMOUNT_ZERO, f"{entry.account}: amount {amount!r}"
        if abs(amount) > MAX_ENTRY_MICROS:
            return RejectionReason.AMOUNT_TOO_LARGE, f"{entry.account}: {amount} micro-units"
    return None


def _check_balance(t: Transfer) -> Violation | None:
    totals: dict[Currency, int] = {}
    for entry in t.entries:
        currency = entry.account.currency
        totals[currency] = totals.get(currency, 0) + entry.amount_micros
    for currency, total in sorted(totals.items()):
        if total != 0:
            return RejectionReason.UNBALANCED, f"entries sum to {total} {currency.value} micros"
    return None


def _check_fx(t: Transfer) -> Violation | None:
    currencies = t.currencies
    if len(currencies) > 1 and t.fx is None:
        return RejectionReason.FX_MISSING, "a transfer across currencies needs its rate"
    if len(currencies) == 1 and (t.fx is not None or t.kind is TransferKind.FX):
        return RejectionReason.FX_UNEXPECTED, "an FX quote or kind on a one-currency transfer"
    if t.fx is None:
        return None
    fx = t.fx
    if fx.base == fx.quote or currencies != {fx.base, fx.quote}:
        return (
            RejectionReason.FX_CURRENCIES,
            f"entries in {sorted(currencies)} for {fx.base}/{fx.quote}",
        )
    rate = fx.rate
    if not rate.is_finite() or rate <= 0 or _significant_digits(rate) > MAX_RATE_DIGITS:
        return RejectionReason.FX_RATE_INVALID, f"rate {rate}"
    return _check_fx_house(t, fx)


def _significant_digits(value: Decimal) -> int:
    digits = "".join(map(str, value.as_tuple().digits)).strip("0")
    return len(digits)


def _check_fx_house(t: Transfer, fx: FxQuote) -> Violation | None:
    houses = {
        e.account.currency: e.amount_micros
        for e in t.entries
        if e.account.kind is AccountKind.FX_HOUSE
    }
    # Accounts are distinct within a transfer, so there is at most one FX house per currency.
    if set(houses) != {fx.base, fx.quote}:
        return RejectionReason.FX_HOUSE_MISSING, "one FX house entry per currency is required"
    base_leg, quote_leg = houses[fx.base], houses[fx.quote]
    if (base_leg > 0) == (quote_leg > 0):
        return (
            RejectionReason.FX_HOUSE_MISSING,
            "the FX house must take one currency, pay the other",
        )
    expected = convert(abs(base_leg), fx.rate)
    if abs(quote_leg) != expected:
        return (
            RejectionReason.FX_AMOUNT_MISMATCH,
            f"{abs(base_leg)} {fx.base.value} micros at {fx.rate_text} make {expected},"
            f" not {abs(quote_leg)}",
        )
    return None
