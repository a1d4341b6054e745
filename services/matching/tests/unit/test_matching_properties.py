"""Random command streams through the engine and through a plainly written reference model.

The model (``matching_model``) keeps every offer's pool and resting bid in flat dicts and
answers each command by filtering and sorting them: slow, and obviously right. The engine
must produce exactly the model's fills, interruptions and status updates, report every
level it changed with the right depth, and keep the invariants below after every command.
The streams mix capacity in: offers with an interruptible leg and notices, releases and
reclaims of the leases sold so far (picked by running the model while the stream is built),
of unknown ones too, changes of capacity and of the interruptible price. A third kind of
stream rates sellers' reliability as it goes (each rate with the total it was counted over,
some lower than the one held: older rates the engine must ignore) and gives orders a minimum
reliability.
"""

from __future__ import annotations

import json
from collections import Counter
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
    MatchingEngine,
    OfferUpdate,
    OrderUpdate,
    PlaceOrder,
    ReclaimLease,
    ReleaseLease,
    Result,
    SetFx,
    SetSellerReliability,
    WithdrawOffer,
    apply,
    books_changed,
    decode_command,
    encode_command,
    json_parts,
    snapshot_from,
)

from .matching_model import (
    INT,
    OD,
    Model,
    Out,
    crossed_pairs,
    engine_bids,
    engine_legs,
    ref,
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
    st.sampled_from([None, 1, 2, 4]),  # interruptible price: this many quarters below
    st.sampled_from([120, 120, 300, 86_400]),  # notice
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
# A narrower market, where pools run out and on-demand orders preempt: one GPU, one currency,
# no constraints, mostly offers with an interruptible leg.
crowded_offer = st.tuples(
    st.just("offer"),
    st.sampled_from(ACCOUNTS),
    st.just("h100"),
    st.sampled_from(["on_demand", "on_demand", "interruptible"]),
    offer_prices,
    st.just("EUR"),
    st.integers(1, 4),
    st.none(),
    st.none(),
    st.none(),
    st.sampled_from([2, 1, 4, None]),
    st.sampled_from([120, 300]),
)
crowded_order = st.tuples(
    st.just("order"),
    st.sampled_from(["buyer", *ACCOUNTS]),
    st.just("h100"),
    st.sampled_from(["interruptible", "on_demand", "any"]),
    st.one_of(order_prices, st.none()),
    st.just("EUR"),
    st.integers(1, 6),
    st.none(),
    st.none(),
    st.sampled_from(["limit", "limit", "market"]),
    st.sampled_from(["gtc", "gtc", "ioc", "fok"]),
    st.integers(5, 60),
)


def steps_of(offers: st.SearchStrategy[Any], orders: st.SearchStrategy[Any]) -> Any:
    """Command specs drawing offers and orders from these."""
    return st.tuples(
        st.sampled_from([0, 1, 1, 2, 5]),  # time passing before the command
        st.integers(0, 99),  # which command; the thresholds in ``build`` set the mix
        offers,
        orders,
        st.integers(0, 50),  # which earlier offer, order or lease a command names
        st.one_of(st.none(), offer_prices),  # a change's new price
        st.sampled_from([None, None, 1, 3, 6, 9]),  # a change's new count
        st.integers(0, len(RATE_SETS) - 1),
        st.one_of(st.none(), st.none(), offer_prices),  # a change's new interruptible price
    )


Step = tuple[
    int, int, tuple[Any, ...], tuple[Any, ...], int, int | None, int | None, int, int | None
]


def _add_offer(i: int, now: int, offer: tuple[Any, ...]) -> AddOffer:
    _, seller, gpu, tier, price, cur, gpus, region, min_hours, until, below, notice = offer
    expiry = None if until is None else now + until
    billing = "second" if i % 2 else "hour"
    interruptible = None
    if tier == OD and below is not None:
        interruptible = max(price - below * 250_000, 250_000)
    return AddOffer(
        now,
        f"f{i}",
        seller,
        gpu,
        tier,
        price,
        cur,
        gpus,
        billing,
        region,
        min_hours,
        expiry,
        interruptible,
        notice,
    )


def _place_order(i: int, now: int, order: tuple[Any, ...]) -> PlaceOrder:
    _, buyer, gpu, tier, price, cur, gpus, region, hours, otype, tif, ttl = order
    if otype == "limit" and price is None:
        price = 1_000_000
    expires = now + ttl if tif == "gtd" else None
    return PlaceOrder(
        now, f"b{i}", buyer, gpu, gpus, cur, otype, price, tier, region, hours, tif, expires
    )


def _lease_command(model: Model, now: int, pick: int, which: int) -> Command | None:
    """A release or reclaim of a lease the model's pools know (now and then of one they do
    not); None when they know none."""
    leases = model.lease_ids()
    if pick == 99:
        return ReleaseLease(now, f"b{which}:b1", f"f{which}", 1)
    if not leases:
        return None
    offer_id, lease_id, gpus = leases[which % len(leases)]
    if pick < 96:
        return ReleaseLease(now, lease_id, offer_id, gpus)
    return ReclaimLease(now, offer_id, lease_id)


Rated = tuple[int | None, dict[str, tuple[int, int]]]
"""A rated stream's extra per step: an order's minimum reliability, sellers' new rates (each
with the total it was counted over)."""


def _rates_command(now: int, ratings: dict[str, tuple[int, int]]) -> SetSellerReliability:
    """Sellers' rates, and the totals that are not 0 (0: as if none were given)."""
    totals = {seller: total for seller, (_, total) in ratings.items() if total}
    return SetSellerReliability(
        now, {seller: rate for seller, (rate, _) in ratings.items()}, totals or None
    )


def build(steps: list[Step], rates: int, rated: list[Rated] | None = None) -> list[Command]:
    """Turn specs into commands: unique ids, rising time, references to earlier ids (leases
    picked among those the model holds at that point). ``rated``: the stream starts by rating
    sellers, orders have minimums, and some steps rate sellers again (instead of an expiry)."""
    model = Model(RATE_SETS[rates])
    commands: list[Command] = []
    ids: tuple[list[str], list[str]] = ([], [])
    """The offer ids and the order ids so far."""
    now = 1_000
    if rated:
        commands.append(_rates_command(now, rated[0][1]))
        model.run(commands[-1])
    for i, step in enumerate(steps):
        now += step[0]
        command = _step_command(model, i, now, step, ids, rated[i] if rated else None)
        model.run(command)
        commands.append(command)
    return commands


def _step_command(  # noqa: PLR0917 - the stream's state, then the step
    model: Model,
    i: int,
    now: int,
    step: Step,
    ids: tuple[list[str], list[str]],
    extra: Rated | None,
) -> Command:
    """Step ``i``'s command: a release or reclaim, a new offer or order, or else a change."""
    _, pick, offer, order, which, *_ = step
    command = _lease_command(model, now, pick, which) if pick >= 80 else None
    if command is not None:
        return command
    if pick < 24:
        ids[0].append(f"f{i}")
        return _add_offer(i, now, offer)
    if pick < 62 or pick >= 80:
        ids[1].append(f"b{i}")
        return _place_order(i, now, order)._replace(
            min_reliability_bp=None if extra is None else extra[0]
        )
    return _change_command(now, step, ids, extra)


def _change_command(
    now: int, step: Step, ids: tuple[list[str], list[str]], extra: Rated | None
) -> Command:
    """A change of an earlier offer, a withdrawal, a cancel, new rates, or time passing."""
    _, pick, _, _, which, price, gpus, fx, interruptible = step
    offer_ids, order_ids = ids
    if pick < 68 and offer_ids:
        return ChangeOffer(now, offer_ids[which % len(offer_ids)], price, gpus, interruptible)
    if pick < 70 and offer_ids:
        return WithdrawOffer(now, offer_ids[which % len(offer_ids)])
    if pick < 74 and order_ids:
        return CancelOrder(now, order_ids[which % len(order_ids)])
    if pick < 76 or (pick < 78 and extra is None):
        return SetFx(now, RATE_SETS[fx])
    if extra is not None:
        return _rates_command(now, extra[1])
    return Expire(now)


streams = st.one_of(
    st.tuples(
        st.lists(steps_of(offer_spec, order_spec), min_size=8, max_size=80),
        st.integers(0, len(RATE_SETS) - 1),
    ),
    st.tuples(
        st.lists(steps_of(crowded_offer, crowded_order), min_size=8, max_size=80),
        st.just(0),
    ),
).map(lambda spec: (build(*spec), spec[1]))
"""(commands, index of the FX rates they start from)."""

# Rated streams: sellers' rates (few values, so minimums sit on both sides of them; a seller
# left out stays unrated), each with a total (few values too, so that later rates counted
# over fewer leases, older ones, come often), orders with a minimum most of the time.
ratings = st.dictionaries(
    st.sampled_from(["seller", *ACCOUNTS]),
    st.tuples(st.sampled_from([7_500, 5_000, 10_000, 0, 9_999]), st.sampled_from([0, 4, 2, 9])),
)
rated_step = st.tuples(st.sampled_from([7_500, None, 5_000, 0, 10_000, 9_999]), ratings)


def _rated_stream(spec: tuple[list[tuple[Step, Rated]], int]) -> tuple[list[Command], int]:
    steps, rates = spec
    return build([s for s, _ in steps], rates, [r for _, r in steps]), rates


rated_streams = st.one_of(
    st.tuples(
        st.lists(st.tuples(steps_of(offer_spec, order_spec), rated_step), min_size=8, max_size=80),
        st.integers(0, len(RATE_SETS) - 1),
    ),
    st.tuples(
        st.lists(
            st.tuples(steps_of(crowded_offer, crowded_order), rated_step), min_size=8, max_size=80
        ),
        st.just(0),
    ),
).map(_rated_stream)
"""Streams where sellers are rated and orders have minimum reliabilities."""

all_streams = st.one_of(streams, rated_streams)
"""Every kind of stream; the tests over it run half as many examples again as before the
rated streams, so the first two kinds are drawn about as often as they were."""


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
    assert list(result.interruptions) == out.interruptions
    assert result.rejection == out.rejection
    after = model.depth()
    reported = {level_key(c): c.gpus for c in result.levels}
    for key, gpus in reported.items():
        assert after.get(key, 0) == gpus, key
    for key in set(before) | set(after):
        if before.get(key, 0) != after.get(key, 0):
            assert key in reported, key
    for offer_id, o in model.offers.items():
        assert engine.offer(offer_id) == model.offer_update(o)
    assert {i: b.remaining for i, b in engine_bids(engine).items()} == {
        i: b.remaining for i, b in model.bids.items()
    }
    assert engine.reliability == model.reliability
    assert not crossed_pairs(engine)


def check_pools(engine: MatchingEngine, model: Model, leases: dict[str, dict[str, int]]) -> None:
    """Every pool: leased + free == capacity, free >= 0, its leases are its trades less the
    released ones, and what they hold (not waiting for a preempted lease) is what is leased."""
    for offer_id in model.offers:
        pool = engine.pool(offer_id)
        assert pool is not None
        assert pool.leased + pool.free == pool.capacity
        assert pool.free >= 0
        assert {i: lease.gpus for i, lease in pool.leases.items()} == leases.get(offer_id, {})
        held = sum(lease.gpus for lease in pool.leases.values() if lease.starts_after is None)
        assert held + pool.legacy == pool.leased


def check_fills(command: Command, result: Result, model: Model) -> None:
    for fill in result.fills:
        assert fill.buyer_id != fill.seller_id
        assert fill.billing == "second" or fill.tier == OD
    if isinstance(command, PlaceOrder):
        filled = sum(f.gpus for f in result.fills if f.order_id == command.order_id)
        if command.time_in_force == "fok":
            assert filled in (0, command.gpus)
        if command.time_in_force == "ioc" or command.order_type == "market":
            assert command.order_id not in model.bids
        if command.tier != OD:
            assert result.interruptions == ()
    # Price priority: a taker bid's fills of free GPUs never get cheaper in reference terms,
    # a taker offer leg's never dearer.
    if isinstance(command, PlaceOrder):
        ranks = [
            ref(f.price_micros, model.rates[f.currency])
            for f in result.fills
            if f.starts_at_micros == f.at_micros
        ]
        assert ranks == sorted(ranks)
    elif isinstance(command, AddOffer | ChangeOffer | ReleaseLease):
        for tier in (OD, INT):
            ranks = [
                ref(f.price_micros, model.rates[f.currency]) for f in result.fills if f.tier == tier
            ]
            assert ranks == sorted(ranks, reverse=True)


def check_minimums(
    engine: MatchingEngine, minimums: dict[str, int | None], command: Command, result: Result
) -> None:
    """No trade comes from a seller below its order's minimum reliability, or unrated (the
    rates the engine holds after the command are those it matched at: only a rates command
    changes them, before it matches)."""
    if isinstance(command, PlaceOrder):
        minimums[command.order_id] = command.min_reliability_bp
    rates = engine.reliability
    for fill in result.fills:
        minimum = minimums[fill.order_id]
        if minimum is not None:
            assert fill.seller_id in rates, fill
            assert rates[fill.seller_id] >= minimum, fill


def follow_leases(leases: dict[str, dict[str, int]], command: Command, result: Result) -> None:
    """The leases each pool should hold: every fill's, less those released."""
    for fill in result.fills:
        leases.setdefault(fill.offer_id, {})[fill.trade_id] = fill.gpus
    if isinstance(command, ReleaseLease) and result.rejection is None:
        leases.get(command.offer_id, {}).pop(command.lease_id, None)


@settings(max_examples=450, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(all_streams)
def test_engine_matches_the_reference_model(stream: tuple[list[Command], int]) -> None:
    commands, rates = stream
    engine = MatchingEngine(RATE_SETS[rates])
    model = Model(RATE_SETS[rates])
    bought: Counter[str] = Counter()
    leases: dict[str, dict[str, int]] = {}
    last_order: dict[str, OrderUpdate] = {}
    last_offer: dict[str, OfferUpdate] = {}
    minimums: dict[str, int | None] = {}
    for command in commands:
        before = model.depth()
        result = apply(engine, command)
        out = model.run(command)
        check_command(engine, model, result, out, before)
        check_fills(command, result, model)
        check_minimums(engine, minimums, command, result)
        follow_leases(leases, command, result)
        check_pools(engine, model, leases)
        for fill in result.fills:
            bought[fill.order_id] += fill.gpus
        last_order.update((u.order_id, u) for u in result.orders)
        last_offer.update((u.offer_id, u) for u in result.offers)

    # Quantities conserved: every order's GPUs are filled, resting or cancelled, nothing else.
    for order_id, order_update in last_order.items():
        assert order_update.gpus == (
            order_update.filled + order_update.remaining + order_update.cancelled
        )
        assert bought[order_id] == order_update.filled
    # An offer never shows more leased than its capacity, nor free GPUs it does not have.
    for offer_update in last_offer.values():
        assert offer_update.sold <= offer_update.gpus
        assert offer_update.remaining <= offer_update.gpus - offer_update.sold
    assert engine.counts() == (len(model.bids), sum(1 for o in model.offers.values() if o.free))
    for b in model.bids.values():
        assert engine.order(b.id) == model.bid_update(b)
    for o in model.offers.values():
        assert engine.offer(o.id) == model.offer_update(o)


@settings(max_examples=225, deadline=None)
@given(all_streams, st.integers(0, 60))
def test_restore_of_a_snapshot_behaves_identically(
    stream: tuple[list[Command], int], cut: int
) -> None:
    commands, rates = stream
    original = MatchingEngine(RATE_SETS[rates])
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


@settings(max_examples=150, deadline=None)
@given(all_streams)
def test_replaying_a_stream_gives_identical_results(stream: tuple[list[Command], int]) -> None:
    commands, rates = stream
    first = MatchingEngine(RATE_SETS[rates])
    second = MatchingEngine(RATE_SETS[rates])
    assert [apply(first, c) for c in commands] == [apply(second, c) for c in commands]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rated_streams)
def test_no_trade_comes_from_a_seller_below_the_bids_minimum(
    stream: tuple[list[Command], int],
) -> None:
    """Whatever the orders, offers, releases and rate changes (of sellers and of FX), every
    trade of an order with a minimum is with a seller rated at least that; and a replay of
    the log form of the stream trades exactly the same."""
    commands, rates = stream
    engine = MatchingEngine(RATE_SETS[rates])
    replay = MatchingEngine(RATE_SETS[rates])
    minimums: dict[str, int | None] = {}
    for command in commands:
        result = apply(engine, command)
        check_minimums(engine, minimums, command, result)
        assert apply(replay, decode_command(*encode_command(command))) == result
    assert replay.snapshot() == engine.snapshot()


# Aggregated levels ----------------------------------------------------------------------------

BIG_DEPTH = 10_000


def model_levels(engine: MatchingEngine, gpu: str, tier: str) -> BookLevels:
    """A book's levels computed plainly from the engine's snapshot (not its book sides)."""
    legs, bids = engine_legs(engine), engine_bids(engine)
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
        (micros(leg.price, leg.currency), leg.free)
        for leg in legs
        if leg.gpu == gpu and leg.tier == tier
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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(all_streams)
def test_levels_aggregate_the_book_and_every_change_names_its_books(
    stream: tuple[list[Command], int],
) -> None:
    commands, rates = stream
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
        legs, bids = engine_legs(engine), engine_bids(engine)
        # Both legs of a pool show its free GPUs, each in its own book.
        assert sum(lv.gpus for (_, tier), b in after.items() for lv in b.asks) == sum(
            leg.free for leg in legs
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
