"""The invariants a chaos run must leave intact, checked against what the owners published.

``Owners`` is what the owning services said, read back from their topics to the end: every
trade (market.trades), each order's status events (orders.status), each offer's last status
(offers.status) and last accepted form (pricing.offers), the leases billing opened
(billing.leases) and the GPUs it gave back when leases ended (capacity.commands). ``Views``
is what the gateway shows its users (their order and offer lists, the best asks, the book).
Each ``check_*`` records one invariant in the report.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_contracts.capacity import LeaseReleased
from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseOpened
from gpux_contracts.money import Currency, quantize, to_micros
from gpux_contracts.offers import OfferAccepted, OfferStatus, OfferStatusChanged
from gpux_contracts.orders import OrderStatusChanged, TradeExecuted
from gpux_contracts.topics import (
    BILLING_LEASES,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_STATUS,
    PRICING_OFFERS,
    Topic,
)
from gpux_devinfra.testing.chaos import ChaosReport
from gpux_devinfra.testing.kafka import records_to_end
from gpux_platform.settings import GpuxSettings

from .load import CURRENCY, FINAL_ORDER, GPUS, TIER, Market

BOOK = "matching"
"""The producer of the book's reports."""
WALLETS_CHECK = "views: every buyer's wallet view equals billing's ledger"
SHOWN = 5
"""How many offending ids a failed check names."""


def _some(items: Any) -> str:
    listed = sorted(items)
    more = f" (+{len(listed) - SHOWN} more)" if len(listed) > SHOWN else ""
    return f"{listed[:SHOWN]}{more}"


@dataclass
class Owners:
    """What the owning services published, read to the end of their topics."""

    trades: dict[str, TradeExecuted] = field(default_factory=dict)
    conflicting_trades: set[str] = field(default_factory=set)
    order_events: dict[str, list[OrderStatusChanged]] = field(
        default_factory=lambda: defaultdict(list)
    )
    offer_status: dict[str, OfferStatusChanged] = field(default_factory=dict)
    """Each offer's last status from the book (matching owns live, exhausted, ...)."""
    offer_vetted: dict[str, OfferStatusChanged] = field(default_factory=dict)
    """Each offer's last status from pricing (accepted, rejected): it stands for the offer
    only while the book never reported on it (a rejected offer never reaches the book)."""
    offer_accepted: dict[str, OfferAccepted] = field(default_factory=dict)
    offer_prices: dict[str, set[Decimal]] = field(default_factory=lambda: defaultdict(set))
    """Every price pricing accepted for each offer (any revision)."""
    leases: Counter[str] = field(default_factory=Counter)
    released: dict[str, LeaseReleased] = field(default_factory=dict)
    """Each ended lease's release (by lease id; a republished one counts once)."""


async def _envelopes(settings: GpuxSettings, topic: Topic) -> list[Envelope[Any]]:
    codec = topic.codec()
    return [codec.decode(r.value) for r in await records_to_end(settings, topic)]


async def _payloads(settings: GpuxSettings, topic: Topic) -> list[Any]:
    return [e.payload for e in await _envelopes(settings, topic)]


async def read_owners(settings: GpuxSettings) -> Owners:
    """Every owner's topic, to its end offsets."""
    owners = Owners()
    for trade in await _payloads(settings, MARKET_TRADES):
        known = owners.trades.setdefault(trade.trade_id, trade)
        if known != trade:
            owners.conflicting_trades.add(trade.trade_id)
    for event in await _payloads(settings, ORDERS_STATUS):
        owners.order_events[event.order_id].append(event)
    for envelope in await _envelopes(settings, OFFERS_STATUS):
        by = owners.offer_status if envelope.producer == BOOK else owners.offer_vetted
        by[envelope.payload.offer_id] = envelope.payload
    for event in await _payloads(settings, PRICING_OFFERS):
        if isinstance(event, OfferAccepted):
            owners.offer_prices[event.offer.offer_id].add(event.offer.price_per_gpu_hour)
            known_offer = owners.offer_accepted.get(event.offer.offer_id)
            if known_offer is None or known_offer.revision <= event.revision:
                owners.offer_accepted[event.offer.offer_id] = event
    # A lease.opened is announced at least once (the outbox); distinct lease ids are counted.
    opened = {e.lease_id for e in await _payloads(settings, BILLING_LEASES) if _opened(e)}
    owners.leases.update(opened)
    for event in await _payloads(settings, CAPACITY_COMMANDS):
        if isinstance(event, LeaseReleased):
            owners.released[event.lease_id] = event
    return owners


def _opened(event: Any) -> bool:
    return isinstance(event, LeaseOpened)


@dataclass
class Views:
    """What the gateway shows: each account's orders and offers, and each book's prices."""

    orders: dict[str, dict[str, Any]]
    offers: dict[str, dict[str, Any]]
    prices: dict[str, dict[str, Any] | None]
    """The on-demand best ask over every region, per GPU (None: nothing offered)."""
    books: dict[str, dict[str, Any]]
    wallets: dict[str, tuple[int, int]]
    """Each buyer's EUR wallet (by account id): available and held, in micro-units."""


async def _pages(market: Market, path: str, key: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = f"?limit=100&cursor={cursor}" if cursor else "?limit=100"
        page = await market.client.ok("GET", path + query, key)
        items += page["items"]
        cursor = page.get("next_cursor")
        if not cursor:
            return items


async def read_views(market: Market) -> Views:
    """The buyers' orders, the sellers' offers, each GPU's best ask and book, through the API."""
    orders = {o["id"]: o for key in market.buyers for o in await _pages(market, "/v1/orders", key)}
    offers = {o["id"]: o for key in market.sellers for o in await _pages(market, "/v1/offers", key)}
    prices: dict[str, dict[str, Any] | None] = {}
    books: dict[str, dict[str, Any]] = {}
    for gpu in GPUS:
        quotes = await market.client.ok("GET", f"/v1/prices/{gpu}?currency={CURRENCY}")
        prices[gpu] = next(
            (q["best_ask"] for q in quotes["items"] if q["tier"] == TIER and q["region"] == "*"),
            None,
        )
        books[gpu] = await market.client.ok("GET", f"/v1/orderbook/{gpu}?tier={TIER}")
    return Views(orders, offers, prices, books, await _wallets(market))


async def _wallets(market: Market) -> dict[str, tuple[int, int]]:
    found = {}
    for key in market.buyers:
        account = await market.client.ok("GET", "/v1/accounts/me", key)
        shown = await market.client.ok("GET", "/v1/accounts/me/balances", key)
        eur = [w for w in shown["items"] if w["currency"] == CURRENCY]
        found[account["id"]] = (
            (_micros(eur[0]["available"]), _micros(eur[0]["held"])) if eur else (-1, -1)
        )
    return found


def _micros(text: str) -> int:
    return to_micros(quantize(Decimal(text)))


def check_orders(report: ChaosReport, market: Market, owners: Owners, views: Views) -> None:
    """Every accepted order is listed, final, and was given exactly one final state."""
    missing = set(market.orders) - set(views.orders)
    report.check(
        "orders: every accepted order (202) is in its buyer's list",
        not missing,
        f"{len(market.orders)} accepted; missing {_some(missing)}",
    )
    open_ = {i for i in market.orders if views.orders.get(i, {}).get("status") not in FINAL_ORDER}
    report.check(
        "orders: every accepted order is in a final state",
        not open_,
        f"not final: {_some(open_)}; statuses "
        f"{dict(Counter(o['status'] for o in views.orders.values()))}",
    )
    several = {
        i
        for i in market.orders
        if len({e.status for e in owners.order_events.get(i, []) if e.status in FINAL_ORDER}) != 1
    }
    report.check(
        "orders: the owners gave each accepted order exactly one final state",
        not several,
        f"none or several: {_some(several)}",
    )


def check_order_views(report: ChaosReport, market: Market, owners: Owners, views: Views) -> None:
    """The gateway shows each order as its owners last said (status, GPUs filled)."""
    stale = set()
    for order_id in market.orders:
        events = owners.order_events.get(order_id)
        shown = views.orders.get(order_id)
        if not events or shown is None:
            stale.add(order_id)
            continue
        last = events[-1]
        if (shown["status"], shown["filled_gpus"]) != (last.status, last.filled_gpus):
            stale.add(order_id)
    report.check(
        "views: every order view equals the owners' last status",
        not stale,
        f"{len(market.orders)} compared; differ: {_some(stale)}",
    )


def check_trades(report: ChaosReport, owners: Owners, views: Views) -> None:
    """No trade lost or doubled: one id per fill, each order's and each offer's GPUs add up."""
    report.check(
        "trades: no trade id published with two different contents",
        not owners.conflicting_trades,
        _some(owners.conflicting_trades),
    )
    by_order: Counter[str] = Counter()
    by_offer: Counter[str] = Counter()
    for trade in owners.trades.values():
        by_order[trade.order_id] += trade.gpus
        by_offer[trade.offer_id] += trade.gpus
    orders = {
        i
        for i, o in views.orders.items()
        if o["filled_gpus"] != by_order[i] or by_order[i] > o["gpus"]
    }
    report.check(
        "trades: each order's filled GPUs equal its trades' GPUs",
        not orders,
        f"{len(owners.trades)} trades; differ: {_some(orders)}",
    )
    for release in owners.released.values():
        by_offer[release.offer_id] -= release.gpus
    # A withdrawn or expired offer's leases run on, but the book no longer reports on it.
    offers = {
        i
        for i, o in views.offers.items()
        if o["status"] in ("live", "exhausted")
        and (
            o["leased_gpus"] != by_offer[i]
            or o["capacity_gpus"] != o["leased_gpus"] + o["remaining_gpus"]
        )
    }
    report.check(
        "trades: each offer's leased GPUs are its trades' GPUs less those released, and"
        " leased + free = capacity",
        not offers,
        f"{len(views.offers)} offers, {len(owners.released)} releases; differ: {_some(offers)}",
    )


async def check_leases(report: ChaosReport, owners: Owners, conn: asyncpg.Connection) -> None:
    """Every trade became exactly one lease (billing's table and its lease.opened events)."""
    rows = await conn.fetch("SELECT id FROM billing.leases")
    stored = Counter(str(r["id"]) for r in rows)
    trades = set(owners.trades)
    report.check(
        "trades: every trade is exactly one lease in billing",
        set(stored) == trades,
        f"{len(trades)} trades, {len(stored)} leases; without a lease "
        f"{_some(trades - set(stored))}; without a trade "
        f"{_some(set(stored) - trades)}",
    )
    report.check(
        "trades: billing announced each trade's lease (lease.opened)",
        set(owners.leases) == trades,
        f"not announced {_some(trades - set(owners.leases))}; "
        f"unknown {_some(set(owners.leases) - trades)}",
    )


async def check_wallets(report: ChaosReport, views: Views, conn: asyncpg.Connection) -> None:
    """Every buyer's wallet view (available, held) equals billing's ledger (-1: not shown)."""
    ledger = PostgresLedger(conn)
    held = await ledger.wallet_balances([(a, Currency(CURRENCY)) for a in views.wallets])
    booked = {account: held[(account, Currency(CURRENCY))] for account in views.wallets}
    differ = {
        a: f"view {v}, ledger {booked[a]}" for a, v in views.wallets.items() if v != booked[a]
    }
    report.check(
        WALLETS_CHECK,
        not differ,
        f"{len(views.wallets)} wallets; differ {differ}",
    )


async def check_ledger(report: ChaosReport, conn: asyncpg.Connection) -> None:
    """Entries sum to zero per currency and every balance equals its entries."""
    audit = await PostgresLedger(conn).verify()
    report.check(
        "ledger: entries sum to zero per currency",
        all(total == 0 for _, total in audit.totals),
        f"totals {audit.totals}; unbalanced transfers {_some(audit.unbalanced)}",
    )
    report.check(
        "ledger: every balance equals its entries (and no floor is broken)",
        audit.ok,
        f"discrepancies {audit.discrepancies[:SHOWN]}; malformed "
        f"{_some(audit.malformed)}; below floor {audit.below_floor[:SHOWN]}",
    )
    count = await conn.fetchval("SELECT count(*) FROM billing.transfers")
    report.notes["ledger transfers"] = count


def check_best_asks(report: ChaosReport, views: Views) -> None:
    """Per GPU: the best ask (GET /v1/prices) equals the book's cheapest ask level
    (GET /v1/orderbook) and the cheapest live offer the sellers see."""
    wrong = {}
    for gpu in GPUS:
        live = [
            Decimal(o["price_per_gpu_hour"])
            for o in views.offers.values()
            if o["gpu"] == gpu and o["status"] == "live" and o["remaining_gpus"] > 0
        ]
        cheapest = min(live) if live else None
        best = views.prices[gpu]
        asked = None if best is None else Decimal(best["offered_price"])
        asks = views.books[gpu]["asks"]
        book = Decimal(asks[0]["price"]) if asks else None
        if not asked == book == cheapest:
            wrong[gpu] = f"best ask {asked}, book {book}, cheapest live offer {cheapest}"
    report.check(
        "prices: the best ask equals the book's cheapest free offer",
        not wrong,
        str(wrong) if wrong else f"{len(GPUS)} books agree",
    )


def _offer_difference(shown: dict[str, Any], owners: Owners) -> str | None:
    """How the gateway's view of an offer differs from its owners' last word (None: equal).

    Status and remaining GPUs are the book's last report (pricing's, for an offer the book
    never had). A live offer shows the price of the last revision pricing accepted; a closed
    one (exhausted, withdrawn, expired, rejected) a price pricing accepted for it: a re-price
    accepted after the book closed the offer changes nothing the market trades at, and whether
    the view shows it depends on which of the two topics the gateway read first.
    """
    offer_id = shown["id"]
    status = owners.offer_status.get(offer_id) or owners.offer_vetted.get(offer_id)
    if status is None:
        return "no status from its owners"
    accepted = owners.offer_accepted.get(offer_id)
    last = None if accepted is None else accepted.offer.price_per_gpu_hour
    price = Decimal(shown["price_per_gpu_hour"])
    if status.status == OfferStatus.LIVE:
        price_ok = price == last
    else:
        price_ok = accepted is None or price in owners.offer_prices[offer_id]
    seen = (shown["status"], shown["remaining_gpus"])
    said = (status.status.value, status.remaining_gpus)
    if seen == said and price_ok:
        return None
    revision = None if accepted is None else accepted.revision
    return f"view {seen} at {price}, owners {said} at {last} (revision {revision})"


def check_offer_views(report: ChaosReport, market: Market, owners: Owners, views: Views) -> None:
    """The gateway shows each offer as its owners last said (status, remaining, price)."""
    missing = set(market.offers) - set(views.offers)
    stale = {i: d for i, o in views.offers.items() if (d := _offer_difference(o, owners))}
    report.notes["closed offers showing a price before their last accepted re-price"] = sum(
        1
        for i, o in views.offers.items()
        if i not in stale
        and (accepted := owners.offer_accepted.get(i)) is not None
        and Decimal(o["price_per_gpu_hour"]) != accepted.offer.price_per_gpu_hour
    )
    report.check(
        "views: every offer view equals the owners' last state",
        not (missing | set(stale)),
        f"{len(market.offers)} offers, {market.reprices} re-prices; missing "
        f"{_some(missing)}; differ {dict(list(stale.items())[:SHOWN])}",
    )
