"""Settlement, aggregated: one event for many leases' charges, one for many transfers.

Billing's settlement loop charges every running lease once a period. Announcing each charge
on its own (``lease.charged`` and ``ledger.posted``) made two events per lease per tick; the
loop instead publishes, per batch it settles, ``leases.settled`` on ``billing.leases`` (each
lease's charges of that step, summed, with its running totals) and ``ledger.batch_posted`` on
``billing.ledger`` (the transfers it posted, each as ``ledger.posted`` carries it), each in
chunks of at most ``MAX_ITEMS`` so a record stays far below Kafka's 1 MB default. A reader
applies each item exactly as it applies the per-lease event: totals of the highest
``period`` stay, a transfer's lines are kept once. Trades and stops (one lease, with a cause)
still announce ``lease.charged`` and ``ledger.posted``; so does a billing configured with
``GPUX_SETTLEMENT_EVENTS=per_lease`` (for a rolling upgrade: readers first).

The key of a chunk is the id of its first lease (``billing.leases``) or transfer
(``billing.ledger``); the items' order carries no meaning across chunks or partitions.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.events import Payload
from gpux_contracts.leases import LeaseKey, LeaseTotals, LedgerPosted
from gpux_contracts.money import Currency, DecimalAmount

MAX_ITEMS = 500
"""Most items in one ``leases.settled`` or ``ledger.batch_posted`` (a record well under 1 MB)."""


class LeaseCharges(LeaseKey):
    """One lease's charges in one settlement step: one or more periods, summed."""

    seller_id: str
    currency: Currency = Field(description="The offer's currency (`amount`, `fee`, totals).")
    wallet_currency: Currency = Field(description="The buyer paid from this wallet.")
    period_start: AwareDatetime = Field(description="Start of the first period charged.")
    period_end: AwareDatetime = Field(description="End of the last period charged.")
    amount: DecimalAmount = Field(description="The periods' charges, summed (`currency`).")
    paid: DecimalAmount = Field(description="What the buyer paid for them (`wallet_currency`).")
    fee: DecimalAmount = Field(description="The platform's part of `amount`.")
    seller_amount: DecimalAmount = Field(description="The seller's part of `amount`.")
    fx_rate: DecimalAmount | None = Field(
        default=None, description="Offer currency to wallet currency, when they differ."
    )
    fx_rate_at: AwareDatetime | None = None
    transfer_ids: list[str] = Field(
        min_length=1, description="The ledger transfers of these charges, one per period."
    )
    totals: LeaseTotals = Field(description="The lease's running totals after these charges.")


class LeasesSettled(Payload):
    """Leases charged by one batch of the settlement loop (``lease.charged``, aggregated)."""

    event_type: ClassVar[str] = "leases.settled"
    schema_version: ClassVar[int] = 1

    settled_at: AwareDatetime = Field(description="The step charged the periods due by then.")
    leases: list[LeaseCharges] = Field(min_length=1, max_length=MAX_ITEMS)


class LedgerBatchPosted(Payload):
    """Transfers one batch of the settlement loop posted (``ledger.posted``, aggregated)."""

    event_type: ClassVar[str] = "ledger.batch_posted"
    schema_version: ClassVar[int] = 1

    transfers: list[LedgerPosted] = Field(min_length=1, max_length=MAX_ITEMS)
