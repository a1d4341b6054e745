"""Seller payouts: the gateway's and the admin's commands for billing, billing's status events.

A seller asks for a payout in one currency from its ``seller_payable`` balance
(``payout.requested``, on ``billing.commands``, key: the seller's id). Billing either moves
the amount to the seller's ``payouts_in_transit`` account and records the payout
``pending``, or rejects it with a reason (nothing moved). The admin confirms the bank
transfer (``payout.confirm_requested``) and billing books it ``paid``; an admin may reject a
pending payout instead (``payout.reject_requested``: the amount goes back to
``seller_payable``). Every status billing decides is announced on ``billing.payouts``
(``payout.status_changed``, key: the seller's id), which the gateway's view reads.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount

DEFAULT_MINIMUM = "10.00"
"""``GPUX_PAYOUT_MINIMUM``'s default: the smallest payout, the same number in every currency."""
MAX_DESTINATION_CHARS = 200
MAX_REFERENCE_CHARS = 200


class PayoutMethod(StrEnum):
    """How the money leaves gpux."""

    MANUAL = "manual"
    """A bank transfer an operator makes by hand; the admin's confirmation completes it."""


class PayoutStatus(StrEnum):
    """Where a payout is."""

    PENDING_REQUEST = "pending_request"
    """Requested at the gateway; billing has not decided yet (the gateway's own status)."""
    PENDING = "pending"
    """Billing moved the amount to ``payouts_in_transit``: the transfer is on its way."""
    PAID = "paid"
    """The admin confirmed the transfer; the amount is in ``paid_out``."""
    REJECTED = "rejected"
    """Refused (see ``PayoutRejection``); nothing moved, or the amount moved back."""


class PayoutRejection(StrEnum):
    """Why billing rejected a payout."""

    BELOW_MINIMUM = "below_minimum"
    """Less than ``GPUX_PAYOUT_MINIMUM``."""
    INSUFFICIENT_SELLER_PAYABLE = "insufficient_seller_payable"
    """The seller's ``seller_payable`` balance in the currency does not cover the amount."""
    REJECTED_BY_ADMIN = "rejected_by_admin"
    """The admin rejected a pending payout; its amount went back to ``seller_payable``."""


class PayoutKey(FrozenModel):
    """What names a payout in every payout event: its id and its seller (the record key)."""

    payout_id: str
    seller_id: str


class PayoutDecision(PayoutKey):
    """What an admin's decision on a pending payout carries besides who made it."""

    requested_at: AwareDatetime


class PayoutRequested(Payload, PayoutKey):
    """A seller asked to be paid out (a command, gateway → billing)."""

    event_type: ClassVar[str] = "payout.requested"
    schema_version: ClassVar[int] = 1

    payout_id: str = Field(description="Gateway-chosen id; a replay moves nothing twice.")
    currency: Currency
    amount: DecimalAmount
    method: PayoutMethod = PayoutMethod.MANUAL
    destination: str = Field(
        max_length=MAX_DESTINATION_CHARS,
        description="Where to send the money, as the seller wrote it (e.g. an IBAN reference).",
    )
    requested_at: AwareDatetime


class PayoutConfirmRequested(Payload, PayoutDecision):
    """The admin confirmed a pending payout's transfer was made (a command)."""

    event_type: ClassVar[str] = "payout.confirm_requested"
    schema_version: ClassVar[int] = 1

    confirmed_by: str
    reference: str = Field(
        default="", max_length=MAX_REFERENCE_CHARS, description="The bank's transfer reference."
    )


class PayoutRejectRequested(Payload, PayoutDecision):
    """The admin rejected a pending payout (a command): its amount goes back to the seller."""

    event_type: ClassVar[str] = "payout.reject_requested"
    schema_version: ClassVar[int] = 1

    rejected_by: str
    reason: str = Field(default="", max_length=MAX_REFERENCE_CHARS)


class PayoutStatusChanged(Payload, PayoutKey):
    """A payout's status as billing decided it (billing → ``billing.payouts``)."""

    event_type: ClassVar[str] = "payout.status_changed"
    schema_version: ClassVar[int] = 1

    currency: Currency
    amount: DecimalAmount
    status: PayoutStatus
    reason: PayoutRejection | None = None
    reference: str = Field(
        default="", description="What the payment adapter returned (`manual`), or the bank's."
    )
    changed_at: AwareDatetime
