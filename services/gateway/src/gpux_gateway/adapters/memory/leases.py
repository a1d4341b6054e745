"""Leases and statement lines in memory, as the PostgreSQL upserts keep them."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LedgerPosted,
)
from gpux_contracts.money import to_micros
from gpux_contracts.settlement import LeaseCharges
from gpux_gateway.adapters.memory.state import StateRepository, id_page
from gpux_gateway.domain.leases import (
    STORED_FINAL,
    status_of,
    stored_end,
    stored_status,
    totals_apply,
    totals_micros,
)
from gpux_gateway.leases.repository import Earnings, LeaseFilter, LeaseRow, LedgerLineRow


def _new(lease_id: str, buyer_id: str, wallet_currency: str | None, now: datetime) -> LeaseRow:
    """A row as the table's defaults make it: running, not opened, nothing charged."""
    return LeaseRow(
        id=lease_id,
        opened=False,
        order_id=None,
        offer_id=None,
        buyer_id=buyer_id,
        seller_id=None,
        gpu=None,
        tier=None,
        gpus=None,
        price_micros=None,
        currency=None,
        wallet_currency=wallet_currency,
        billing=None,
        hours=None,
        started_at=None,
        ends_at=None,
        status="running",
        end_reason=None,
        ended_at=None,
        unpaid_micros=0,
        low_balance_at=None,
        period=None,
        charged_through=None,
        total_charged_micros=0,
        total_paid_micros=0,
        total_fee_micros=0,
        total_seller_micros=0,
        updated_at=now,
    )


T = TypeVar("T")


def _either(held: T | None, event: T | None) -> T | None:
    """What the row holds, else what the event says (SQL's ``coalesce(held, event)``)."""
    return event if held is None else held


class MemoryLeases(StateRepository):
    """Leases in ``GatewayState.leases``."""

    async def get(self, account_id: str, lease_id: str) -> LeaseRow | None:
        """A lease the account rents or provides (anyone else's is None, like a missing one)."""
        row = self._state.leases.get(lease_id)
        if row is None or not row.opened or account_id not in (row.buyer_id, row.seller_id):
            return None
        return row

    async def page(
        self, which: LeaseFilter, *, after: str | None, limit: int, now: datetime
    ) -> list[LeaseRow]:
        """Up to ``limit`` of the leases ``which`` shows at ``now``, in id order, after the
        cursor lease."""

        def shown(r: LeaseRow) -> bool:
            side = (which.role != "seller" and r.buyer_id == which.account_id) or (
                which.role != "buyer" and r.seller_id == which.account_id
            )
            status = status_of(
                stored=r.status, interrupt_at=r.interrupt_at, started_at=r.started_at, now=now
            )
            return r.opened and side and (which.status is None or status == which.status)

        return id_page(filter(shown, self._state.leases.values()), after, limit)

    async def current(self, lease_id: str) -> LeaseRow | None:
        """The lease as this unit leaves it so far (memory writes at once), whoever's it is."""
        return self._state.leases.get(lease_id)

    async def earnings(self, seller_id: str) -> list[Earnings]:
        """Per offer currency: the sums of the running totals of the leases the account sells."""
        by_currency: dict[str, list[LeaseRow]] = defaultdict(list)
        for row in self._state.leases.values():
            if row.opened and row.seller_id == seller_id and row.currency is not None:
                by_currency[row.currency].append(row)
        return [
            Earnings(
                currency,
                sum(r.total_charged_micros for r in rows),
                sum(r.total_fee_micros for r in rows),
                sum(r.total_seller_micros for r in rows),
                len(rows),
                sum(1 for r in rows if r.status == "running"),
            )
            for currency, rows in sorted(by_currency.items())
        ]

    async def apply_opened(self, opened: LeaseOpened, now: datetime) -> None:
        """Record what a lease is (its status and totals stay whatever later events made them)."""
        held = self._state.leases.get(opened.lease_id) or _new(
            opened.lease_id, opened.buyer_id, opened.wallet_currency.value, now
        )
        self._state.leases[opened.lease_id] = dataclasses.replace(
            held,
            opened=True,
            order_id=opened.order_id,
            offer_id=opened.offer_id,
            seller_id=opened.seller_id,
            gpu=opened.gpu,
            tier=opened.tier,
            gpus=opened.gpus,
            price_micros=to_micros(opened.price_per_gpu_hour),
            currency=opened.currency.value,
            wallet_currency=opened.wallet_currency.value,
            billing=opened.billing.value,
            hours=opened.hours,
            started_at=opened.started_at,
            ends_at=opened.ends_at if held.ready_at is None else held.ends_at,
            updated_at=now,
            provisioning_deadline=opened.provisioning_deadline,
            status=stored_status(
                held=held.status,
                ready=held.ready_at is not None,
                provisioning_deadline=opened.provisioning_deadline,
            ),
        )

    def _ensure(
        self,
        lease_id: str,
        *,
        buyer_id: str,
        seller_id: str | None,
        currency: str | None,
        wallet_currency: str | None,
        now: datetime,
    ) -> LeaseRow:
        """The lease's row, made from what the event knows if it has none yet (what the row
        lacks is taken from the event, as the upserts' coalesce does)."""
        held = self._state.leases.get(lease_id)
        if held is None:
            row = _new(lease_id, buyer_id, wallet_currency, now)
            return dataclasses.replace(row, seller_id=seller_id, currency=currency)
        return dataclasses.replace(
            held,
            seller_id=_either(held.seller_id, seller_id),
            currency=_either(held.currency, currency),
            wallet_currency=_either(held.wallet_currency, wallet_currency),
        )

    def _reported(self, event: LeaseCharged | LeaseCharges | LeaseEnded, now: datetime) -> LeaseRow:
        """The row of the lease a charge or an end reports on, with its parties and currencies."""
        return self._ensure(
            event.lease_id,
            buyer_id=event.buyer_id,
            seller_id=event.seller_id,
            currency=event.currency.value,
            wallet_currency=event.wallet_currency.value,
            now=now,
        )

    def _between(self, event: LeaseInterruptionNoticed | LeaseReady, now: datetime) -> LeaseRow:
        """The row of the lease an event names the parties of, but not the currencies."""
        return self._ensure(
            event.lease_id,
            buyer_id=event.buyer_id,
            seller_id=event.seller_id,
            currency=None,
            wallet_currency=None,
            now=now,
        )

    def _take_totals(self, charged: LeaseCharged | LeaseCharges, now: datetime) -> None:
        row = self._reported(charged, now)
        if totals_apply(row.period, charged.totals.period):
            row = dataclasses.replace(
                row, **totals_micros(charged.totals)._asdict(), updated_at=now
            )
        self._state.leases[row.id] = row

    async def apply_charged(self, charged: LeaseCharged, now: datetime) -> None:
        """Take a charge's running totals (a charge read before its lease.opened keeps them)."""
        self._take_totals(charged, now)

    async def apply_settled(self, charges: Sequence[LeaseCharges], now: datetime) -> None:
        """Take each lease's running totals after its charges, as ``apply_charged`` does."""
        for item in charges:
            self._take_totals(item, now)

    async def apply_low_balance(self, warning: LeaseLowBalance, now: datetime) -> None:
        """Note when the buyer's funds first ran low for this lease."""
        row = self._ensure(
            warning.lease_id,
            buyer_id=warning.buyer_id,
            seller_id=None,
            currency=None,
            wallet_currency=warning.wallet_currency.value,
            now=now,
        )
        first = (
            warning.as_of if row.low_balance_at is None else min(row.low_balance_at, warning.as_of)
        )
        self._state.leases[row.id] = dataclasses.replace(row, low_balance_at=first, updated_at=now)

    async def apply_notice(self, notice: LeaseInterruptionNoticed, now: datetime) -> None:
        """Note the lease's interruption (the first notice read stays)."""
        row = self._between(notice, now)
        self._state.leases[row.id] = dataclasses.replace(
            row,
            offer_id=_either(row.offer_id, notice.offer_id),
            interrupt_at=_either(row.interrupt_at, notice.interrupt_at),
            interruption_cause=_either(row.interruption_cause, notice.cause.value),
            interruption_noticed_at=_either(row.interruption_noticed_at, notice.noticed_at),
            updated_at=now,
        )

    async def apply_ready(self, ready: LeaseReady, now: datetime) -> None:
        """Run a provisioning lease from its ``ready_at`` (the first read stays, with its
        ``ends_at``)."""
        row = self._between(ready, now)
        status = "running" if row.status == "provisioning" else row.status
        first = row.ready_at is None
        self._state.leases[row.id] = dataclasses.replace(
            row,
            ready_at=ready.ready_at if first else row.ready_at,
            ends_at=ready.ends_at if first else row.ends_at,
            status=status,
            updated_at=now,
        )

    async def apply_ended(self, ended: LeaseEnded, now: datetime) -> None:
        """End the lease for good (the first end read stays) and take its final totals."""
        row = self._reported(ended, now)
        if row.status not in STORED_FINAL:
            row = dataclasses.replace(
                row,
                status=stored_end(ended.reason.value),
                end_reason=ended.reason.value,
                ended_at=ended.ended_at,
                unpaid_micros=to_micros(ended.unpaid),
                failure=None if ended.failure is None else ended.failure.value,
                failure_detail=ended.detail,
                updated_at=now,
            )
        if totals_apply(row.period, ended.totals.period):
            row = dataclasses.replace(row, **totals_micros(ended.totals)._asdict(), updated_at=now)
        self._state.leases[row.id] = row


class MemoryLedger(StateRepository):
    """Statement lines in ``GatewayState.ledger``."""

    async def add_posted(self, posted: LedgerPosted) -> None:
        """Keep each line of a posted transfer once (a replayed transfer adds nothing)."""
        for line in posted.lines:
            key = (posted.transfer_id, line.owner, line.currency.value, line.kind)
            if key in self._state.ledger:
                continue
            self._state.ledger[key] = LedgerLineRow(
                seq=self._state.next_seq(),
                transfer_id=posted.transfer_id,
                owner=line.owner,
                currency=line.currency.value,
                account_kind=line.kind,
                transfer_kind=posted.kind,
                amount_micros=to_micros(line.amount),
                created_at=posted.created_at,
                reference=posted.reference,
                fx_rate=posted.fx_rate,
                fx_base=None if posted.fx_base is None else posted.fx_base.value,
                fx_quote=None if posted.fx_quote is None else posted.fx_quote.value,
                fx_rate_at=posted.fx_rate_at,
            )

    async def page(
        self, owner: str, *, currency: str | None, before: int | None, limit: int
    ) -> list[LedgerLineRow]:
        """Up to ``limit`` of the account's lines, newest first, before the cursor line."""
        owned = [r for r in self._state.ledger.values() if r.owner == owner]
        lines = [r for r in owned if currency is None or r.currency == currency]
        if before is not None:
            cursor = next((r for r in owned if r.seq == before), None)
            if cursor is None:  # PostgreSQL compares with NULL: nothing
                return []
            lines = [r for r in lines if (r.created_at, r.seq) < (cursor.created_at, cursor.seq)]
        return sorted(lines, key=lambda r: (r.created_at, r.seq), reverse=True)[:limit]
