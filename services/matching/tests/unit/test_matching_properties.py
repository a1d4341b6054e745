"""Random command streams through the engine and through a plainly written reference model.

The model keeps every live offer and resting bid in flat dicts and answers each command by
filtering and sorting them: slow, and obviously right. The engine must produce exactly the
model's fills and status updates, report every level it changed with the right depth, and
keep the invariants below after every command.

"Crossed", precisely: a live offer ``o`` and a resting bid ``b`` cross when they are for the
same GPU, ``b``'s tier is ``o``'s tier or ``any``, ``b`` has no region or ``o``'s region,
``b``'s hours are open-ended or at least ``o``'s minimum, ``b``'s buyer is not ``o``'s
seller, and ``o``'s reference price is at or below ``b``'s reference limit. Such a pair
would have traded, so it must never exist once a command returns.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpux_matching.domain import (
    AddOffer,
    BookLevel,
    BookLevels,
    CancelOrder,
    ChangeOffer,
    Command,
    Expire,
    Fill,
    MatchingEngine,
    OfferStatus,
    OfferUpdate,
    OrderStatus,
    OrderUpdate,
    PlaceOrder,
    Reason,
    Result,
    SetFx,
    Side,
    WithdrawOffer,
    apply,
    books_changed,
    json_parts,
    snapshot_from,
)

pytestmark = pytest.mark.unit

RATE_SETS: list[dict[str, int | Decimal]] = [
    {"EUR": 1_000_000, "USD": 900_000, "GBP": 1_150_000},
    {"EUR": 1_000_000, "USD": Decimal("1100000.5"), "GBP": 1_000_000},
    {"EUR": 1_000_000, "USD": 500_000, "GBP": Decimal("2000000.25")},
]
ACCOUNTS = ["acme", "blue", "crux"]
GPUS = ["h100", "h100", "h100", "a100"]  # mostly one GPU, so that orders meet offers
REGIONS = [None, "eu", "us"]


def ref(price_micros: int, rate: int | Decimal) -> int:
    value = Decimal(price_micros) * Decimal(rate)
    return int(value.to_integral_value(rounding=ROUND_HALF_EVEN))


# The reference model --------------------------------------------------------------------------


@dataclass
class MOffer:
    id: str
    seller: str
    gpu: str
    tier: str
    price: int
    currency: str
    gpus: int
    billing: str
    region: str | None
    min_hours: int | None
    until: int | None
    seq: int
    sold: int = 0
    taken: int = 0

    @property
    def remaining(self) -> int:
        return self.gpus - self.sold


@dataclass
class MBid:
    id: str
    buyer: str
    gpu: str
    tier: str
    price: int | None
    currency: str
    gpus: int
    region: str | None
    hours: int | None
    expires_at: int | None
    seq: int
    filled: int = 0
    taken: int = 0

    @property
    def remaining(self) -> int:
        return self.gpus - self.filled


@dataclass
class Out:
    fills: list[Fill] = field(default_factory=list)
    orders: list[OrderUpdate] = field(default_factory=list)
    offers: list[OfferUpdate] = field(default_factory=list)
    rejection: Reason | None = None


def may_trade(b: MBid, o: MOffer) -> bool:
    return (
        b.gpu == o.gpu
        and b.tier in (o.tier, "any")
        and b.buyer != o.seller
        and (b.region is None or b.region == o.region)
        and (b.hours is None or o.min_hours is None or b.hours >= o.min_hours)
    )


class Model:
    """Flat lists, linear scans, sorting on every command."""

    def __init__(self, rates: dict[str, int | Decimal]) -> None:
        self.rates = dict(rates)
        self.offers: dict[str, MOffer] = {}
        self.bids: dict[str, MBid] = {}
        self.seq = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def oref(self, o: MOffer) -> int:
        return ref(o.price, self.rates[o.currency])

    def bref(self, b: MBid) -> int:
        assert b.price is not None
        return ref(b.price, self.rates[b.currency])

    def offer_update(self, o: MOffer, status: OfferStatus | None = None) -> OfferUpdate:
        if status is None:
            status = OfferStatus.LIVE if o.remaining else OfferStatus.EXHAUSTED
        remaining = o.remaining if status == OfferStatus.LIVE else 0
        return OfferUpdate(o.id, status, o.gpus, o.sold, remaining, None)

    def bid_update(self, b: MBid) -> OrderUpdate:
        status = (
            OrderStatus.FILLED
            if not b.remaining
            else OrderStatus.PARTIALLY_FILLED
            if b.filled
            else OrderStatus.OPEN
        )
        return OrderUpdate(b.id, status, b.gpus, b.filled, b.remaining, 0, None)

    def expire(self, now: int, out: Out) -> None:
        due: list[tuple[int, int, str]] = [
            (o.until, 0, o.id) for o in self.offers.values() if o.until is not None
        ]
        due += [(b.expires_at, 1, b.id) for b in self.bids.values() if b.expires_at is not None]
        for at, kind, entry_id in sorted(due):
            if at > now:
                continue
            if kind == 0:
                o = self.offers.pop(entry_id)
                out.offers.append(OfferUpdate(o.id, OfferStatus.EXPIRED, o.gpus, o.sold, 0, None))
            else:
                b = self.bids.pop(entry_id)
                out.orders.append(
                    OrderUpdate(b.id, OrderStatus.EXPIRED, b.gpus, b.filled, 0, b.remaining, None)
                )

    def bid_takes(self, b: MBid, bound: int, now: int, out: Out, *, execute: bool) -> int:
        """Offers a bid reaches, cheapest then earliest; returns (and maybe fills) the total."""
        reachable = [o for o in self.offers.values() if may_trade(b, o) and self.oref(o) <= bound]
        reachable.sort(key=lambda o: (self.oref(o), o.seq))
        need, total = b.remaining, 0
        for o in reachable:
            if not need:
                break
            n = min(need, o.remaining)
            need -= n
            total += n
            if not execute:
                continue
            b.taken += 1
            out.fills.append(
                Fill(
                    f"{b.id}:b{b.taken}",
                    b.id,
                    o.id,
                    b.buyer,
                    o.seller,
                    o.gpu,
                    o.tier,
                    n,
                    o.price,
                    o.currency,
                    o.billing,
                    b.hours,
                    Side.BID,
                    now,
                    now,
                )
            )
            b.filled += n
            o.sold += n
            if not o.remaining:
                del self.offers[o.id]
            out.offers.append(self.offer_update(o))
        return total

    def offer_takes(self, o: MOffer, now: int, out: Out) -> None:
        price = self.oref(o)
        reachable = [b for b in self.bids.values() if may_trade(b, o) and self.bref(b) >= price]
        reachable.sort(key=lambda b: (-self.bref(b), b.seq))
        for b in reachable:
            if not o.remaining:
                break
            n = min(o.remaining, b.remaining)
            o.taken += 1
            assert b.price is not None
            out.fills.append(
                Fill(
                    f"{o.id}:a{o.taken}",
                    b.id,
                    o.id,
                    b.buyer,
                    o.seller,
                    o.gpu,
                    o.tier,
                    n,
                    b.price,
                    b.currency,
                    o.billing,
                    b.hours,
                    Side.ASK,
                    now,
                    now,
                )
            )
            o.sold += n
            b.filled += n
            if not b.remaining:
                del self.bids[b.id]
            out.orders.append(self.bid_update(b))

    def run(self, c: Command) -> Out:
        out = Out()
        assert isinstance(c.now, int)
        self.expire(c.now, out)
        if isinstance(c, AddOffer):
            self.add_offer(c, out)
        elif isinstance(c, ChangeOffer):
            self.change_offer(c, out)
        elif isinstance(c, WithdrawOffer):
            o = self.offers.pop(c.offer_id, None)
            if o is None:
                out.rejection = Reason.UNKNOWN_OFFER
            else:
                out.offers.append(OfferUpdate(o.id, OfferStatus.WITHDRAWN, o.gpus, o.sold, 0, None))
        elif isinstance(c, PlaceOrder):
            self.place_order(c, out)
        elif isinstance(c, CancelOrder):
            b = self.bids.pop(c.order_id, None)
            if b is None:
                out.rejection = Reason.UNKNOWN_ORDER
            else:
                out.orders.append(
                    OrderUpdate(
                        b.id,
                        OrderStatus.CANCELLED,
                        b.gpus,
                        b.filled,
                        0,
                        b.remaining,
                        Reason.CANCEL_REQUESTED,
                    )
                )
        elif isinstance(c, SetFx):
            self.set_fx(c, out)
        return out

    def add_offer(self, c: AddOffer, out: Out) -> None:
        assert isinstance(c.available_until, int | None)
        o = MOffer(
            c.offer_id,
            c.seller_id,
            c.gpu,
            c.tier,
            c.price_micros,
            c.currency,
            c.gpus,
            c.billing,
            c.region,
            c.min_hours,
            c.available_until,
            self.next_seq(),
        )
        self.offer_takes(o, c.now, out)  # type: ignore[arg-type]
        if o.remaining:
            self.offers[o.id] = o
        out.offers.append(self.offer_update(o))

    def change_offer(self, c: ChangeOffer, out: Out) -> None:
        o = self.offers.get(c.offer_id)
        if o is None:
            out.rejection = Reason.UNKNOWN_OFFER
            return
        new_price = o.price if c.price_micros is None else c.price_micros
        new_remaining = o.remaining if c.gpus is None else c.gpus - o.sold
        old_remaining = o.remaining
        if c.gpus is not None:
            o.gpus = max(c.gpus, o.sold)
        if new_remaining <= 0:
            del self.offers[o.id]
        elif new_price == o.price and new_remaining <= old_remaining:
            o.gpus = o.sold + new_remaining
        else:
            del self.offers[o.id]
            o.gpus = o.sold + new_remaining
            o.price = new_price
            o.seq = self.next_seq()
            self.offer_takes(o, c.now, out)  # type: ignore[arg-type]
            if o.remaining:
                self.offers[o.id] = o
        out.offers.append(self.offer_update(o))

    def place_order(self, c: PlaceOrder, out: Out) -> None:
        expires = c.expires_at if c.time_in_force == "gtd" else None
        assert isinstance(expires, int | None)
        b = MBid(
            c.order_id,
            c.buyer_id,
            c.gpu,
            c.tier,
            c.price_micros,
            c.currency,
            c.gpus,
            c.region,
            c.hours,
            expires,
            self.next_seq(),
        )
        bound = 1 << 200 if c.price_micros is None else self.bref(b)
        now = c.now
        assert isinstance(now, int)
        if c.time_in_force == "fok" and self.bid_takes(b, bound, now, out, execute=False) < c.gpus:
            out.orders.append(
                OrderUpdate(
                    b.id, OrderStatus.CANCELLED, b.gpus, 0, 0, b.gpus, Reason.FOK_UNFILLABLE
                )
            )
            return
        self.bid_takes(b, bound, now, out, execute=True)
        if not b.remaining:
            out.orders.append(self.bid_update(b))
        elif c.order_type == "market" or c.time_in_force == "ioc":
            out.orders.append(
                OrderUpdate(
                    b.id,
                    OrderStatus.CANCELLED,
                    b.gpus,
                    b.filled,
                    0,
                    b.remaining,
                    Reason.UNFILLED_REMAINDER,
                )
            )
        else:
            self.bids[b.id] = b
            out.orders.append(self.bid_update(b))

    def set_fx(self, c: SetFx, out: Out) -> None:
        self.rates.update(c.rates)  # type: ignore[arg-type]
        now = c.now
        assert isinstance(now, int)
        for b in sorted(self.bids.values(), key=lambda b: (-self.bref(b), b.seq)):
            if self.bids.get(b.id) is not b:
                continue
            if self.bid_takes(b, self.bref(b), now, out, execute=True):
                if not b.remaining:
                    del self.bids[b.id]
                out.orders.append(self.bid_update(b))

    def depth(self) -> Counter[tuple[Any, ...]]:
        levels: Counter[tuple[Any, ...]] = Counter()
        for o in self.offers.values():
            levels[(o.gpu, o.tier, "ask", o.currency, o.price)] += o.remaining
        for b in self.bids.values():
            levels[(b.gpu, b.tier, "bid", b.currency, b.price)] += b.remaining
        return levels


def engine_state(engine: MatchingEngine) -> tuple[dict[str, MOffer], dict[str, MBid]]:
    """The engine's live offers and resting bids, read from its snapshot (not the model)."""
    snap = engine.snapshot()
    offers = {
        o["offer_id"]: MOffer(
            o["offer_id"],
            o["seller_id"],
            o["gpu"],
            o["tier"],
            o["price_micros"],
            o["currency"],
            o["gpus"],
            o["billing"],
            o["region"],
            o["min_hours"],
            o["available_until"],
            o["seq"],
            o["sold"],
            o["taken"],
        )
        for o in snap["offers"]
    }
    bids = {
        b["order_id"]: MBid(
            b["order_id"],
            b["buyer_id"],
            b["gpu"],
            b["tier"],
            b["price_micros"],
            b["currency"],
            b["gpus"],
            b["region"],
            b["hours"],
            b["expires_at"],
            b["seq"],
            b["filled"],
            b["taken"],
        )
        for b in snap["orders"]
    }
    return offers, bids


def crossed_pairs(engine: MatchingEngine) -> list[tuple[str, str]]:
    """Resting bid and live offer pairs on the engine's book that would trade (see top)."""
    offers, bids = engine_state(engine)
    rates = engine.rates
    return [
        (b.id, o.id)
        for b in bids.values()
        for o in offers.values()
        if may_trade(b, o)
        and ref(o.price, rates[o.currency]) <= ref(b.price or 0, rates[b.currency])
    ]


# Streams ------------------------------------------------------------------------------------

# Hypothesis leans towards the first listed value and the low end of ranges; those defaults are
# chosen so that simple streams trade (different accounts, open constraints, crossing prices).
offer_prices = st.integers(min_value=1, max_value=12).map(lambda n: n * 250_000)
order_prices = st.integers(min_value=1, max_value=12).map(lambda n: (13 - n) * 250_000)

offer_spec = st.tuples(
    st.just("offer"),
    st.sampled_from(["seller", *ACCOUNTS]),
    st.sampled_from(GPUS),
    st.sampled_from(["on_demand", "interruptible"]),
    offer_prices,
    st.sampled_from(["EUR", "USD", "GBP"]),
    st.integers(1, 6),
    st.sampled_from(REGIONS),
    st.sampled_from([None, None, 2, 8]),
    st.sampled_from([None, None, 20, 60]),
)
order_spec = st.tuples(
    st.just("order"),
    st.sampled_from(["buyer", *ACCOUNTS]),
    st.sampled_from(GPUS),
    st.sampled_from(["any", "on_demand", "interruptible"]),
    st.one_of(order_prices, st.none()),
    st.sampled_from(["EUR", "USD", "GBP"]),
    st.integers(1, 8),
    st.sampled_from([None, None, None, "eu", "us"]),
    st.sampled_from([None, 1, 4, 12]),
    st.sampled_from(["limit", "limit", "limit", "market"]),
    st.sampled_from(["gtc", "gtc", "gtd", "ioc", "fok"]),
    st.integers(5, 60),
)
step = st.tuples(
    st.sampled_from([0, 1, 1, 2, 5]),  # time passing before the command
    st.integers(0, 99),  # which command; the thresholds in ``build`` set the mix
    offer_spec,
    order_spec,
    st.integers(0, 50),  # which earlier offer or order a change, withdrawal or cancel names
    st.one_of(st.none(), offer_prices),  # a change's new price
    st.sampled_from([None, None, 1, 3, 6, 9]),  # a change's new count
    st.integers(0, len(RATE_SETS) - 1),
)

Step = tuple[int, int, tuple[Any, ...], tuple[Any, ...], int, int | None, int | None, int]


def _add_offer(i: int, now: int, offer: tuple[Any, ...]) -> AddOffer:
    _, seller, gpu, tier, price, cur, gpus, region, min_hours, until = offer
    expiry = None if until is None else now + until
    billing = "second" if i % 2 else "hour"
    return AddOffer(
        now, f"f{i}", seller, gpu, tier, price, cur, gpus, billing, region, min_hours, expiry
    )


def _place_order(i: int, now: int, order: tuple[Any, ...]) -> PlaceOrder:
    _, buyer, gpu, tier, price, cur, gpus, region, hours, otype, tif, ttl = order
    if otype == "limit" and price is None:
        price = 1_000_000
    expires = now + ttl if tif == "gtd" else None
    return PlaceOrder(
        now, f"b{i}", buyer, gpu, gpus, cur, otype, price, tier, region, hours, tif, expires
    )


def build(steps: list[Step]) -> list[Command]:
    """Turn specs into commands: unique ids, rising time, references to earlier ids."""
    commands: list[Command] = []
    offer_ids: list[str] = []
    order_ids: list[str] = []
    now = 1_000
    for i, (dt, pick, offer, order, which, new_price, new_gpus, fx) in enumerate(steps):
        now += dt
        if pick < 33:
            offer_ids.append(f"f{i}")
            commands.append(_add_offer(i, now, offer))
        elif pick < 66:
            order_ids.append(f"b{i}")
            commands.append(_place_order(i, now, order))
        elif pick < 74 and offer_ids:
            offer_id = offer_ids[which % len(offer_ids)]
            commands.append(ChangeOffer(now, offer_id, new_price, new_gpus))
        elif pick < 79 and offer_ids:
            commands.append(WithdrawOffer(now, offer_ids[which % len(offer_ids)]))
        elif pick < 85 and order_ids:
            commands.append(CancelOrder(now, order_ids[which % len(order_ids)]))
        elif pick < 95:
            commands.append(SetFx(now, RATE_SETS[fx]))
        else:
            commands.append(Expire(now))
    return commands


streams = st.lists(step, min_size=8, max_size=80).map(build)


# Properties ---------------------------------------------------------------------------------


def level_key(change: Any) -> tuple[Any, ...]:
    lv = change.level
    return (lv.gpu, lv.tier, str(lv.side), lv.currency, lv.price_micros)


def check_command(
    engine: MatchingEngine, model: Model, result: Result, out: Out, before: Counter[Any]
) -> None:
    assert list(result.fills) == out.fills
    assert list(result.orders) == out.orders
    assert list(result.offers) == out.offers
    assert result.rejection == out.rejection
    after = model.depth()
    reported = {level_key(c): c.gpus for c in result.levels}
    for key, gpus in reported.items():
        assert after.get(key, 0) == gpus, key
    for key in set(before) | set(after):
        if before.get(key, 0) != after.get(key, 0):
            assert key in reported, key
    offers, bids = engine_state(engine)
    assert {i: o.remaining for i, o in offers.items()} == {
        i: o.remaining for i, o in model.offers.items()
    }
    assert {i: b.remaining for i, b in bids.items()} == {
        i: b.remaining for i, b in model.bids.items()
    }
    assert not crossed_pairs(engine)


def check_fills(command: Command, result: Result, model: Model) -> None:
    for fill in result.fills:
        assert fill.buyer_id != fill.seller_id
    if isinstance(command, PlaceOrder):
        filled = sum(f.gpus for f in result.fills if f.order_id == command.order_id)
        if command.time_in_force == "fok":
            assert filled in (0, command.gpus)
        if command.time_in_force == "ioc" or command.order_type == "market":
            assert command.order_id not in model.bids
    # Price priority: a taker bid's fills never get cheaper in reference terms, a taker
    # offer's never dearer.
    ranks = [ref(f.price_micros, model.rates[f.currency]) for f in result.fills]
    if isinstance(command, PlaceOrder):
        assert ranks == sorted(ranks)
    elif isinstance(command, AddOffer | ChangeOffer):
        assert ranks == sorted(ranks, reverse=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams, st.integers(0, len(RATE_SETS) - 1))
def test_engine_matches_the_reference_model(commands: list[Command], rates: int) -> None:
    engine = MatchingEngine(RATE_SETS[rates])
    model = Model(RATE_SETS[rates])
    sold: Counter[str] = Counter()
    bought: Counter[str] = Counter()
    last_offer: dict[str, OfferUpdate] = {}
    last_order: dict[str, OrderUpdate] = {}
    for command in commands:
        before = model.depth()
        result = apply(engine, command)
        out = model.run(command)
        check_command(engine, model, result, out, before)
        check_fills(command, result, model)
        for fill in result.fills:
            sold[fill.offer_id] += fill.gpus
            bought[fill.order_id] += fill.gpus
        last_offer.update((u.offer_id, u) for u in result.offers)
        last_order.update((u.order_id, u) for u in result.orders)

    # No GPU sold twice: an offer's fills add up to what it reports sold, within its count.
    for offer_id, offer_update in last_offer.items():
        assert sold[offer_id] == offer_update.sold <= offer_update.gpus
    # Quantities conserved: every order's GPUs are filled, resting or cancelled, nothing else.
    for order_id, order_update in last_order.items():
        assert order_update.gpus == (
            order_update.filled + order_update.remaining + order_update.cancelled
        )
        assert bought[order_id] == order_update.filled
    assert engine.counts() == (len(model.bids), len(model.offers))
    for b in model.bids.values():
        assert engine.order(b.id) == model.bid_update(b)
    for o in model.offers.values():
        assert engine.offer(o.id) == model.offer_update(o)


@settings(max_examples=150, deadline=None)
@given(streams, st.integers(0, 60))
def test_restore_of_a_snapshot_behaves_identically(commands: list[Command], cut: int) -> None:
    original = MatchingEngine(RATE_SETS[0])
    head, tail = commands[:cut], commands[cut:]
    for command in head:
        apply(original, command)
    snapshot = original.snapshot()
    restored = MatchingEngine.restore(json.loads(json.dumps(snapshot)))
    assert restored.snapshot() == snapshot
    # What the service writes: a capture, encoded later in slices (here of two entries).
    capture = original.capture()
    assert snapshot_from(capture) == snapshot
    from_parts = MatchingEngine.restore(json.loads("".join(json_parts(capture, chunk=2))))
    assert from_parts.snapshot() == snapshot
    for command in tail:
        assert apply(restored, command) == apply(original, command)
    assert restored.snapshot() == original.snapshot()


@settings(max_examples=100, deadline=None)
@given(streams)
def test_replaying_a_stream_gives_identical_results(commands: list[Command]) -> None:
    first = MatchingEngine(RATE_SETS[1])
    second = MatchingEngine(RATE_SETS[1])
    assert [apply(first, c) for c in commands] == [apply(second, c) for c in commands]


# Aggregated levels ----------------------------------------------------------------------------

BIG_DEPTH = 10_000


def model_levels(engine: MatchingEngine, gpu: str, tier: str) -> BookLevels:
    """A book's levels computed plainly from the engine's snapshot (not its book sides)."""
    offers, bids = engine_state(engine)
    rates = engine.rates

    def group(items: list[tuple[int, int]], reverse: bool) -> tuple[BookLevel, ...]:
        levels: dict[int, list[int]] = {}
        for price, gpus in items:
            level = levels.setdefault(price, [0, 0])
            level[0] += gpus
            level[1] += 1
        return tuple(
            BookLevel(price, gpus, count)
            for price, (gpus, count) in sorted(levels.items(), reverse=reverse)
        )

    def micros(price: int, currency: str) -> int:
        exact = Decimal(ref(price, rates[currency])) / 1_000_000
        return int(exact.to_integral_value(rounding=ROUND_HALF_EVEN))

    asks = [
        (micros(o.price, o.currency), o.remaining)
        for o in offers.values()
        if o.gpu == gpu and o.tier == tier
    ]
    resting = [
        (micros(b.price or 0, b.currency), b.remaining)
        for b in bids.values()
        if b.gpu == gpu and b.tier in (tier, "any")
    ]
    return BookLevels(gpu, tier, group(resting, True), group(asks, False))


def all_levels(engine: MatchingEngine) -> dict[tuple[str, str], BookLevels]:
    return {
        (gpu, tier): engine.levels(gpu, tier, BIG_DEPTH)
        for gpu in sorted(set(GPUS))
        for tier in ("on_demand", "interruptible")
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams, st.integers(0, len(RATE_SETS) - 1))
def test_levels_aggregate_the_book_and_every_change_names_its_books(
    commands: list[Command], rates: int
) -> None:
    engine = MatchingEngine(RATE_SETS[rates])
    before = all_levels(engine)
    for command in commands:
        result = apply(engine, command)
        after = all_levels(engine)
        named = set(books_changed(engine, command, result))
        for book, levels in after.items():
            assert levels == model_levels(engine, *book)
            # Sorted best first, one level per price, quantities as they rest.
            bid_prices = [level.price_micros for level in levels.bids]
            ask_prices = [level.price_micros for level in levels.asks]
            assert bid_prices == sorted(set(bid_prices), reverse=True)
            assert ask_prices == sorted(set(ask_prices))
            if levels != before[book]:
                assert book in named, (command, book)
        offers, bids = engine_state(engine)
        assert sum(lv.gpus for (_, tier), b in after.items() for lv in b.asks) == sum(
            o.remaining for o in offers.values()
        )
        resting_any = sum(b.remaining for b in bids.values() if b.tier == "any")
        # A bid for any tier shows in both of its GPU's books.
        assert sum(lv.gpus for b in after.values() for lv in b.bids) == (
            sum(b.remaining for b in bids.values()) + resting_any
        )
        before = after


plain_orders = st.tuples(
    st.booleans(),  # an offer or a bid
    st.sampled_from(["on_demand", "interruptible", "any"]),
    st.integers(1, 12).map(lambda n: n * 250_000),
    st.sampled_from(["EUR", "USD", "GBP"]),
    st.integers(1, 6),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(plain_orders, min_size=1, max_size=60), st.integers(0, len(RATE_SETS) - 1))
def test_levels_are_never_crossed_without_constraints(
    specs: list[tuple[bool, str, int, str, int]], rates: int
) -> None:
    """With no region, minimum hours or self-trade in the way, every crossing trades, so each
    book's best bid shows at or below its best ask."""
    engine = MatchingEngine(RATE_SETS[rates])
    for i, (is_offer, tier, price, currency, gpus) in enumerate(specs):
        command: Command
        if is_offer:
            offer_tier = "on_demand" if tier == "any" else tier
            command = AddOffer(i, f"f{i}", f"s{i}", "h100", offer_tier, price, currency, gpus)
        else:
            command = PlaceOrder(i, f"b{i}", f"u{i}", "h100", gpus, currency, "limit", price, tier)
        apply(engine, command)
        for tier_name in ("on_demand", "interruptible"):
            levels = engine.levels("h100", tier_name)
            if levels.bids and levels.asks:
                assert levels.bids[0].price_micros <= levels.asks[0].price_micros
