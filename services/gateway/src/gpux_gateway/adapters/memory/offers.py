"""The sellers' offers and the buyers' orders in memory, as the PostgreSQL tables keep them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from gpux_contracts.money import to_micros
from gpux_contracts.offers import OfferAccepted, OfferStatusChanged, OfferSubmitted
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, TradeExecuted
from gpux_contracts.reliability import min_reliability_bp
from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.domain.offers import Standing, after_report, change_applies
from gpux_gateway.domain.orders import report_applies
from gpux_gateway.offers.repository import OfferRow
from gpux_gateway.orders.repository import FillRow, OrderRow

OFFERS = OwnedRows[OfferRow](lambda s: s.offers, lambda o: o.seller_id, "offer")
ORDERS = OwnedRows[OrderRow](lambda s: s.orders, lambda o: o.buyer_id, "order")


def _micros(price: Decimal | None) -> int | None:
    return None if price is None else to_micros(price)


def _either(reported: int | None, shown: int | None) -> int | None:
    """What a report says, or what is shown when it says nothing (SQL's coalesce)."""
    return shown if reported is None else reported


class MemoryOffers(StateRepository):
    """Offers in ``GatewayState.offers``."""

    async def add(self, offer: OfferSubmitted, now: datetime) -> OfferRow:
        """Store the seller's view of a submitted offer (status pending)."""
        row = OfferRow(
            id=offer.offer_id,
            seller_id=offer.seller_id,
            gpu=offer.gpu,
            gpus=offer.gpus,
            remaining_gpus=offer.gpus,
            price_micros=to_micros(offer.price_per_gpu_hour),
            currency=offer.currency.value,
            tier=offer.tier.value,
            billing=offer.billing.value,
            region=offer.region,
            min_hours=offer.min_hours,
            available_until=offer.available_until,
            status="pending",
            reason=None,
            created_at=now,
            updated_at=now,
            interruptible_price_micros=_micros(offer.interruptible_price_per_gpu_hour),
            interruption_notice_seconds=offer.interruption_notice_seconds,
            provisioning_timeout_seconds=offer.provisioning_timeout_seconds,
        )
        OFFERS.add(self._state, row)
        return row

    async def get(self, seller_id: str, offer_id: str) -> OfferRow | None:
        """One of the seller's offers (another seller's is None, like a missing one)."""
        return OFFERS.get(self._state, seller_id, offer_id)

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[OfferRow]:
        """Up to ``limit`` of the seller's offers in id order, after the cursor id."""
        return OFFERS.page(self._state, seller_id, after, limit)

    async def apply_status(self, change: OfferStatusChanged, now: datetime) -> None:
        """Take a status report as ``domain.offers.after_report`` says, with the capacity and
        leased GPUs it carries (a report without them keeps those shown)."""
        row = await self.get(change.seller_id, change.offer_id)
        if row is None:
            return
        held = Standing(row.status, row.remaining_gpus, row.reason)
        report = Standing(change.status.value, change.remaining_gpus, change.reason)
        shown = after_report(held, report)
        if shown is not None:
            self._state.offers[row.id] = dataclasses.replace(
                row,
                status=shown.status,
                reason=shown.reason,
                remaining_gpus=shown.remaining_gpus,
                capacity_gpus=_either(change.capacity_gpus, row.capacity_gpus),
                leased_gpus=_either(change.leased_gpus, row.leased_gpus),
                updated_at=now,
            )

    async def apply_accepted(self, accepted: OfferAccepted, now: datetime) -> None:
        """Show the prices, notice and GPUs of a later accepted revision of an open offer."""
        offer = accepted.offer
        row = await self.get(offer.seller_id, offer.offer_id)
        if row is None:
            return
        if change_applies(
            held_status=row.status, held_revision=row.revision, revision=accepted.revision
        ):
            self._state.offers[row.id] = dataclasses.replace(
                row,
                price_micros=to_micros(offer.price_per_gpu_hour),
                gpus=offer.gpus,
                revision=accepted.revision,
                interruptible_price_micros=_micros(offer.interruptible_price_per_gpu_hour),
                interruption_notice_seconds=offer.interruption_notice_seconds,
                updated_at=now,
            )


class MemoryOrders(StateRepository):
    """Orders in ``GatewayState.orders`` and their fills in ``GatewayState.fills``."""

    async def add(
        self, order: OrderPlaced, now: datetime, *, ssh_key_ids: Sequence[str] = ()
    ) -> OrderRow:
        """Store the buyer's view of a placed order (status pending_funds) with its SSH keys."""
        price = order.max_price_per_gpu_hour
        row = OrderRow(
            id=order.order_id,
            buyer_id=order.buyer_id,
            gpu=order.gpu,
            gpus=order.gpus,
            filled_gpus=0,
            remaining_gpus=order.gpus,
            type=order.type.value,
            max_price_micros=None if price is None else to_micros(price),
            currency=order.currency.value,
            tier=order.tier.value,
            region=order.region,
            hours=order.hours,
            time_in_force=order.time_in_force.value,
            expires_at=order.expires_at,
            status="pending_funds",
            reason=None,
            shortfall_micros=None,
            shortfall_currency=None,
            created_at=now,
            updated_at=now,
            wallet_currency=None if order.wallet_currency is None else order.wallet_currency.value,
            rebuy_on_interruption=order.rebuy_on_interruption,
            rebuy_of=order.rebuy_of,
            ssh_key_ids=list(ssh_key_ids),
            min_reliability_bp=min_reliability_bp(order.min_reliability),
        )
        ORDERS.add(self._state, row)
        return row

    async def get(self, buyer_id: str, order_id: str) -> OrderRow | None:
        """One of the buyer's orders (another buyer's is None, like a missing one)."""
        return ORDERS.get(self._state, buyer_id, order_id)

    async def page(self, buyer_id: str, after: str | None, limit: int) -> list[OrderRow]:
        """Up to ``limit`` of the buyer's orders in id order, after the cursor id."""
        return ORDERS.page(self._state, buyer_id, after, limit)

    async def fills(self, buyer_id: str, order_id: str) -> list[FillRow]:
        """The fills of one of the buyer's orders, oldest first."""
        return sorted(
            (
                f
                for f in self._state.fills.values()
                if f.order_id == order_id and f.buyer_id == buyer_id
            ),
            key=lambda f: f.seq,
        )

    async def apply_status(self, change: OrderStatusChanged, now: datetime) -> None:
        """Take a status report unless it would undo a newer one."""
        row = await self.get(change.buyer_id, change.order_id)
        if row is None or not report_applies(
            held_status=row.status,
            held_filled_gpus=row.filled_gpus,
            filled_gpus=change.filled_gpus,
        ):
            return
        shortfall = change.shortfall
        self._state.orders[row.id] = dataclasses.replace(
            row,
            status=change.status.value,
            filled_gpus=change.filled_gpus,
            remaining_gpus=change.remaining_gpus,
            reason=change.reason,
            shortfall_micros=None if shortfall is None else to_micros(shortfall),
            shortfall_currency=(
                None if change.shortfall_currency is None else change.shortfall_currency.value
            ),
            updated_at=now,
        )

    async def add_fill(self, trade: TradeExecuted) -> None:
        """Keep one fill of a buyer's order (a redelivered trade is kept once)."""
        if trade.trade_id in self._state.fills:
            return
        self._state.fills[trade.trade_id] = FillRow(
            trade_id=trade.trade_id,
            seq=self._state.next_seq(),
            order_id=trade.order_id,
            buyer_id=trade.buyer_id,
            gpus=trade.gpus,
            price_micros=to_micros(trade.price_per_gpu_hour),
            currency=trade.currency.value,
            tier=trade.tier,
            billing=trade.billing,
            hours=trade.hours,
            executed_at=trade.executed_at,
            offer_id=trade.offer_id,
            starts_at=trade.starts_at,
        )

    async def apply_cap(self, buyer_id: str, order_id: str, cap_micros: int) -> None:
        """Show a market order's held cap where it has no price of its own."""
        row = await self.get(buyer_id, order_id)
        if row is not None and row.max_price_micros is None:
            self._state.orders[row.id] = dataclasses.replace(
                row, max_price_micros=cap_micros, cap_from_billing=True
            )
