"""``Desk``: one partition of the book on the memory store, and the inputs its peers send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from gpux_contracts.capacity import LeaseReclaimRequested, LeaseReleased
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.market import MarketState, MarketStateChanged
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferAccepted,
    OfferSubmitted,
    OfferWithdrawn,
    Tier,
)
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderTier,
    OrderType,
    TimeInForce,
    TradeExecuted,
)
from gpux_contracts.topics import (
    CAPACITY_COMMANDS,
    MARKET_SESSIONS,
    ORDERS_BOOK,
    PRICING_OFFERS,
    Topic,
)
from gpux_matching.adapters.memory.unit_of_work import MemoryMatching, MemoryPartitionStore
from gpux_matching.domain import Command, decode_command
from gpux_matching.service import (
    CAPACITY_HANDLERS,
    OFFER_HANDLERS,
    ORDER_HANDLERS,
    SESSION_HANDLERS,
)
from gpux_matching.service.partition import Partition
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
GPU = "h100"
PARTITIONS = 6


def envelope(payload: Payload, producer: str = "peer") -> Envelope[Any]:
    return wrap(payload, producer=producer, occurred_at=NOW)


class Desk:
    """One partition of the book on the memory store, fed as its peers would feed it."""

    def __init__(self, *, snapshot_every: int = 1000, number: int = 0) -> None:
        self.clock = ManualClock(NOW)
        self.store = MemoryPartitionStore()
        self.partition = self.new_partition(number, snapshot_every)

    def new_partition(self, number: int = 0, snapshot_every: int = 1000) -> Partition:
        """Another partition object on the same store (a second instance, or a restart)."""
        return Partition(
            number,
            store=self.store,
            clock=self.clock,
            snapshot_every=snapshot_every,
            partitions=PARTITIONS,
        )

    @property
    def uow(self) -> MemoryMatching:
        return self.store.uow

    # Inputs -----------------------------------------------------------------------------

    @staticmethod
    def offer(price: str = "0.40", gpus: int = 4, **fields: Any) -> OfferSubmitted:
        values: dict[str, Any] = {
            "offer_id": new_id(),
            "seller_id": "seller-1",
            "gpu": GPU,
            "gpus": gpus,
            "price_per_gpu_hour": Decimal(price),
            "currency": Currency.EUR,
            "tier": Tier.ON_DEMAND,
            "billing": BillingGranularity.HOUR,
        }
        return OfferSubmitted(**{**values, **fields})

    @staticmethod
    def order(gpus: int = 2, price: str | None = None, **fields: Any) -> OrderPlaced:
        values: dict[str, Any] = {
            "order_id": new_id(),
            "buyer_id": "buyer-1",
            "gpu": GPU,
            "gpus": gpus,
            "type": OrderType.MARKET if price is None else OrderType.LIMIT,
            "max_price_per_gpu_hour": None if price is None else Decimal(price),
            "currency": Currency.EUR,
            "tier": OrderTier.ANY,
            "hours": 2,
            "time_in_force": TimeInForce.GTC,
        }
        return OrderPlaced(**{**values, **fields})

    @staticmethod
    def accepted(
        offer: OfferSubmitted, revision: int = 1, changed: list[str] | None = None
    ) -> Envelope[Any]:
        payload = OfferAccepted(offer=offer, revision=revision, changed=changed)
        return envelope(payload, "pricing")

    @staticmethod
    def withdrawn(offer: OfferSubmitted) -> Envelope[Any]:
        payload = OfferWithdrawn(offer_id=offer.offer_id, seller_id=offer.seller_id, gpu=offer.gpu)
        return envelope(payload, "pricing")

    @staticmethod
    def funded(order: OrderPlaced) -> Envelope[Any]:
        payload = OrderFunded(
            order=order, hold_id=new_id(), held=Decimal("100"), held_currency=Currency.EUR
        )
        return envelope(payload, "billing")

    @staticmethod
    def cancel(order: OrderPlaced) -> Envelope[Any]:
        payload = OrderCancelRequested(
            order_id=order.order_id, buyer_id=order.buyer_id, gpu=order.gpu
        )
        return envelope(payload, "billing")

    def released(
        self,
        lease: TradeExecuted,
        gpus: int | None = None,
        reason: LeaseEndReason = LeaseEndReason.STOPPED,
    ) -> Envelope[Any]:
        """Billing's word that the lease of ``lease`` (a trade) ended, giving back ``gpus``
        (all of its GPUs unless given)."""
        payload = LeaseReleased(
            lease_id=lease.trade_id,
            offer_id=lease.offer_id,
            gpu=lease.gpu,
            gpus=lease.gpus if gpus is None else gpus,
            tier=Tier(lease.tier),
            reason=reason,
            ended_at=self.clock.now(),
        )
        return envelope(payload, "billing")

    def reclaim(self, lease: TradeExecuted) -> Envelope[Any]:
        """The seller's request (checked by the gateway) to take a lease's GPUs back."""
        payload = LeaseReclaimRequested(
            lease_id=lease.trade_id,
            buyer_id=lease.buyer_id,
            offer_id=lease.offer_id,
            seller_id=lease.seller_id,
            gpu=lease.gpu,
            requested_at=self.clock.now(),
        )
        return envelope(payload, "gateway")

    def session(self, scope: str, state: MarketState, at: datetime | None = None) -> Envelope[Any]:
        payload = MarketStateChanged(
            scope=scope,
            state=state,
            reason="test",
            changed_at=at or self.clock.now(),
            changed_by="admin",
        )
        return envelope(payload, "gateway")

    # Consuming ----------------------------------------------------------------------------

    async def offers(self, *events: Envelope[Any]) -> Outcome:
        """Apply ``pricing.offers`` records as one batch of this partition."""
        return await self.partition.consume(PRICING_OFFERS, events, OFFER_HANDLERS)

    async def orders(self, *events: Envelope[Any]) -> Outcome:
        """Apply ``orders.book`` records as one batch of this partition."""
        return await self.partition.consume(ORDERS_BOOK, events, ORDER_HANDLERS)

    async def capacity(self, *events: Envelope[Any]) -> Outcome:
        """Apply ``capacity.commands`` records as one batch of this partition."""
        return await self.partition.consume(CAPACITY_COMMANDS, events, CAPACITY_HANDLERS)

    async def sessions(self, *events: Envelope[Any]) -> Outcome:
        """Apply ``market.sessions`` records as one batch."""
        batch = BatchHandler(MARKET_SESSIONS, SESSION_HANDLERS, self.store.sessions)
        return await batch.apply(events)

    # What came out ------------------------------------------------------------------------

    def published(self, topic: Topic) -> list[Any]:
        """The payloads published on ``topic``, in order."""
        return [m.envelope.payload for m in self.uow.published if m.topic is topic]

    def logged(self) -> list[Command]:
        """Every command the partition logged, in order."""
        number = self.partition.number
        return [decode_command(k, b) for _, p, k, b in self.uow.state.commands if p == number]

    def later(self, seconds: float) -> None:
        self.clock.advance(timedelta(seconds=seconds))
