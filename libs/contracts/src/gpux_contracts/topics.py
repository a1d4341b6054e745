"""The registry of Kafka topics: every topic gpux uses is declared here, once.

docs/ARCHITECTURE.md lists who produces and consumes each; deploy/k8s renders
a KafkaTopic per entry. Services never spell a topic name as a string literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gpux_contracts.accounts import AccountChanged, ApiKeyChanged
from gpux_contracts.billing import (
    BalanceChanged,
    CreditRequested,
    TopupConfirmRequested,
    TopupRequested,
)
from gpux_contracts.book import BookLevelsChanged
from gpux_contracts.capacity import (
    LeaseInterruptionNoticed,
    LeaseInterruptionRequested,
    LeaseReclaimRequested,
    LeaseReleased,
)
from gpux_contracts.catalog import GpuPublished, ModelPublished
from gpux_contracts.events import EventCodec, Payload
from gpux_contracts.fx import RatePublished
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseFailureReported,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LeaseReadyReported,
    LeaseStopRequested,
    LedgerPosted,
)
from gpux_contracts.market import MarketStateChanged
from gpux_contracts.offers import (
    OfferAccepted,
    OfferChangeRequested,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
    OfferWithdrawn,
)
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatusChanged,
    TradeExecuted,
)
from gpux_contracts.payouts import (
    PayoutConfirmRequested,
    PayoutRejectRequested,
    PayoutRequested,
    PayoutStatusChanged,
)
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.settlement import LeasesSettled, LedgerBatchPosted
from gpux_contracts.smoke import PingSent


class Cleanup(StrEnum):
    """Kafka ``cleanup.policy`` of a topic."""

    COMPACT = "compact"
    """State: the latest value per key is kept forever."""
    DELETE = "delete"
    """Stream: records are kept for the retention period."""


@dataclass(frozen=True, slots=True)
class Topic:
    """One Kafka topic: its name, what its key is, how many partitions, how it is cleaned,
    and the payload types its records carry (the AsyncAPI document is generated from them)."""

    name: str
    key: str
    partitions: int
    cleanup: Cleanup
    description: str
    retention_ms: int | None = None
    payloads: tuple[type[Payload], ...] = ()

    def codec(self) -> EventCodec[Any]:
        """The reader of this topic's records: every payload type it carries."""
        return EventCodec(*self.payloads)

    def configs(self) -> dict[str, str]:
        """Topic-level Kafka configs for creating the topic."""
        result = {"cleanup.policy": self.cleanup.value}
        if self.retention_ms is not None:
            result["retention.ms"] = str(self.retention_ms)
        return result


_WEEK_MS = 7 * 24 * 3600 * 1000
_MONTH_MS = 30 * 24 * 3600 * 1000

CATALOG_GPUS = Topic(
    "catalog.gpus",
    "gpu id",
    1,
    Cleanup.COMPACT,
    "Every GPU model with its specs and fit.",
    payloads=(GpuPublished,),
)
CATALOG_MODELS = Topic(
    "catalog.models",
    "model id",
    1,
    Cleanup.COMPACT,
    "Every open-model architecture the estimator knows.",
    payloads=(ModelPublished,),
)
ACCOUNTS = Topic(
    "gateway.accounts",
    "account id",
    3,
    Cleanup.COMPACT,
    "Every account's roles and status.",
    payloads=(AccountChanged,),
)
KEYS = Topic(
    "gateway.keys",
    "key id",
    3,
    Cleanup.COMPACT,
    "Every API key's status (active or revoked).",
    payloads=(ApiKeyChanged,),
)
ORDERS_BOOK = Topic(
    "orders.book",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Funded orders and cancels for the book.",
    _WEEK_MS,
    payloads=(OrderFunded, OrderCancelRequested),
)
ORDERS_STATUS = Topic(
    "orders.status",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Order status from billing and the book.",
    _WEEK_MS,
    payloads=(OrderStatusChanged,),
)
CAPACITY_COMMANDS = Topic(
    "capacity.commands",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Offers' capacity for the book: ended leases (billing) and sellers' reclaims (gateway).",
    _WEEK_MS,
    payloads=(LeaseReleased, LeaseReclaimRequested),
)
MARKET_TRADES = Topic(
    "market.trades",
    "gpu id",
    6,
    Cleanup.DELETE,
    "One event per fill.",
    _MONTH_MS,
    payloads=(TradeExecuted,),
)
BILLING_BALANCES = Topic(
    "billing.balances",
    "account id|currency",
    3,
    Cleanup.COMPACT,
    "Each wallet's available and held balance (latest).",
    payloads=(BalanceChanged,),
)
BILLING_COMMANDS = Topic(
    "billing.commands",
    "account id",
    6,
    Cleanup.DELETE,
    "Commands for billing: credits, top-ups, lease stops, the seller's ready and failure"
    " reports (gateway) and interruptions (book).",
    _WEEK_MS,
    payloads=(
        CreditRequested,
        TopupRequested,
        TopupConfirmRequested,
        LeaseStopRequested,
        LeaseReadyReported,
        LeaseFailureReported,
        LeaseInterruptionRequested,
        PayoutRequested,
        PayoutConfirmRequested,
        PayoutRejectRequested,
    ),
)
FX_RATES = Topic(
    "fx.rates",
    "currency pair",
    1,
    Cleanup.COMPACT,
    "FX rates with their timestamp.",
    payloads=(RatePublished,),
)
OFFERS_COMMANDS = Topic(
    "offers.commands",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Sellers' offer commands from the gateway.",
    _WEEK_MS,
    payloads=(OfferSubmitted, OfferChangeRequested, OfferWithdrawalRequested),
)
PRICING_OFFERS = Topic(
    "pricing.offers",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Validated offers on their way to the book.",
    _WEEK_MS,
    payloads=(OfferAccepted, OfferWithdrawn),
)
OFFERS_STATUS = Topic(
    "offers.status",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Offer status and remaining GPUs.",
    _WEEK_MS,
    payloads=(OfferStatusChanged,),
)
PRICING_BEST_ASKS = Topic(
    "pricing.best-asks",
    "gpu|tier|region",
    3,
    Cleanup.COMPACT,
    "Best ask and depth per book.",
    payloads=(BestAskChanged,),
)
ORDERS_COMMANDS = Topic(
    "orders.commands",
    "gpu id",
    6,
    Cleanup.DELETE,
    "Buyers' order commands from the gateway.",
    _WEEK_MS,
    payloads=(OrderPlaced, OrderCancelRequested),
)
MARKET_SESSIONS = Topic(
    "market.sessions",
    "* or gpu id",
    1,
    Cleanup.COMPACT,
    "Market sessions: open or halted, for all GPUs (*) or one.",
    payloads=(MarketStateChanged,),
)
BILLING_LEASES = Topic(
    "billing.leases",
    "lease id",
    6,
    Cleanup.DELETE,
    "Lease events: opened, ready, charged, low balance, interruption notice, ended.",
    _MONTH_MS,
    payloads=(
        LeaseOpened,
        LeaseReady,
        LeaseCharged,
        LeasesSettled,
        LeaseLowBalance,
        LeaseInterruptionNoticed,
        LeaseEnded,
    ),
)
BILLING_LEDGER = Topic(
    "billing.ledger",
    "transfer id",
    6,
    Cleanup.DELETE,
    "Every posted transfer with its entries on accounts' balances (statements).",
    _MONTH_MS,
    payloads=(LedgerPosted, LedgerBatchPosted),
)
BILLING_PAYOUTS = Topic(
    "billing.payouts",
    "seller id",
    3,
    Cleanup.DELETE,
    "Sellers' payouts as billing decides them: pending, paid, rejected.",
    _MONTH_MS,
    payloads=(PayoutStatusChanged,),
)
BILLING_RELIABILITY = Topic(
    "billing.reliability",
    "offer id",
    3,
    Cleanup.COMPACT,
    "Each offer's and its seller's delivery record: leases ready in time, failed, reclaimed.",
    payloads=(ReliabilityChanged,),
)
MARKET_BOOK = Topic(
    "market.book",
    "gpu|tier",
    3,
    Cleanup.COMPACT,
    "Each book's aggregated bid and ask levels (latest).",
    payloads=(BookLevelsChanged,),
)
SMOKE_PINGS = Topic(
    "smoke.pings",
    "ping id",
    1,
    Cleanup.DELETE,
    "Plumbing check: a ping any service answers.",
    24 * 3600 * 1000,
    payloads=(PingSent,),
)

REGISTRY: tuple[Topic, ...] = (
    CATALOG_GPUS,
    CATALOG_MODELS,
    ACCOUNTS,
    KEYS,
    FX_RATES,
    OFFERS_COMMANDS,
    PRICING_OFFERS,
    OFFERS_STATUS,
    PRICING_BEST_ASKS,
    ORDERS_COMMANDS,
    ORDERS_BOOK,
    ORDERS_STATUS,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
    BILLING_COMMANDS,
    BILLING_BALANCES,
    MARKET_SESSIONS,
    BILLING_LEASES,
    BILLING_LEDGER,
    BILLING_PAYOUTS,
    BILLING_RELIABILITY,
    MARKET_BOOK,
    SMOKE_PINGS,
)
"""Every topic, in the order docs/ARCHITECTURE.md lists them."""


def by_name(name: str) -> Topic:
    """Look a topic up by its registry name."""
    for topic in REGISTRY:
        if topic.name == name:
            return topic
    raise KeyError(name)
