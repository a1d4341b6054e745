"""The matching engine: commands in, results out; pure, deterministic, in memory.

Every command carries its time; before acting, the engine expires what is due at that time,
so an expired order or offer never trades. Same commands in the same order give the same
results, trade ids included: that is what makes a replay after a crash safe.

An offer is a pool of GPUs sold in one or two legs (docs/CAPACITY.md): every fill is a lease
of the pool, an exhausted offer stays in the engine's keeping, and GPUs come back with
``release_lease``; on-demand orders preempt interruptible leases (``capacity``).

Sellers' reliability rates come in as a command (``set_seller_reliability``), like FX rates,
each with the total it was counted over (a lower total than held is an older rate: ignored):
an order with ``min_reliability_bp`` fills only from pools whose seller has a rate at least
that high (``reliability``), in every place a region is checked.

``add_offer`` and ``place_order`` are the hot path (``bench/matching.py``, which calls them
positionally, as the tests do): each is kept in one piece, the common case inline and the
rare ones (validation, FOK, two sides at once, two legs, preemption) behind one test,
because a call per command or per fill shows in the benchmark. That is why they, and the
fill loops of ``fills``, carry the size and argument-count waivers of ruff and
``scripts/function_length.py``.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Mapping

from gpux_matching.domain.book import BookSide
from gpux_matching.domain.capacity import Capacity
from gpux_matching.domain.entries import NO_HOURS, BidEntry, OfferEntry, PoolExtra
from gpux_matching.domain.planning import plan_for_bid, plan_for_offer
from gpux_matching.domain.reliability import UNRATED, newer, reliability_from, totals_from
from gpux_matching.domain.results import (
    LevelChange,
    OfferUpdate,
    OrderUpdate,
    Result,
)
from gpux_matching.domain.state import (
    BID,
    OFFER,
    PRIORITY,
    new_tuple,
    offer_state,
    order_state,
)
from gpux_matching.domain.types import (
    OfferStatus,
    OrderStatus,
    OrderType,
    Reason,
    Side,
    Tier,
    TimeInForce,
)
from gpux_matching.domain.units import Instant, epoch_micros, rates_from, reference_price
from gpux_matching.domain.validation import (
    DEFAULT_NOTICE_S,
    OFFER_TIERS,
    ORDER_TIERS,
    ORDER_TYPES,
    TIMES_IN_FORCE,
    change_problem,
    offer_shape_problem,
    offer_terms_problem,
    order_price_problem,
    order_shape_problem,
    order_terms_problem,
)

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_SIDE_ASK = Side.ASK
_CANCEL_REQUESTED = Reason.CANCEL_REQUESTED
_FOK = TimeInForce.FOK
_FOK_UNFILLABLE = Reason.FOK_UNFILLABLE
_GTD = TimeInForce.GTD
_INVALID_FX_RATE = Reason.INVALID_FX_RATE
_INVALID_RELIABILITY = Reason.INVALID_RELIABILITY
_IOC = TimeInForce.IOC
_MARKET = OrderType.MARKET
_OFFER_REJECTED = OfferStatus.REJECTED
_OFFER_WITHDRAWN = OfferStatus.WITHDRAWN
_OFFER_LIVE = OfferStatus.LIVE
_ORDER_CANCELLED = OrderStatus.CANCELLED
_ORDER_FILLED = OrderStatus.FILLED
_ORDER_OPEN = OrderStatus.OPEN
_ORDER_PARTIALLY_FILLED = OrderStatus.PARTIALLY_FILLED
_ORDER_REJECTED = OrderStatus.REJECTED
_UNFILLED_REMAINDER = Reason.UNFILLED_REMAINDER
_UNKNOWN_OFFER = Reason.UNKNOWN_OFFER
_UNKNOWN_ORDER = Reason.UNKNOWN_ORDER
_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)  # a plain str: compares fastest
_ON_DEMAND = str(Tier.ON_DEMAND)
_SECOND = "second"

_new = new_tuple

_NO_PLAN: tuple[list[tuple[OfferEntry, int]], int] = ([], 0)  # never mutated

MARKET_BOUND = 1 << 126
"""The bound of a market order without a cap: above every reference price."""


class MatchingEngine(Capacity):
    """Order books for every GPU model and tier, matched with price-time priority.

    Prices rank by their value in a reference currency (``set_fx``); a trade is priced at the
    resting side's own price and currency. See ``docs/PERFORMANCE.md`` for its speed.
    """

    __slots__ = ()

    # Commands -------------------------------------------------------------------------------

    def add_offer(  # noqa: C901, PLR0912, PLR0913, PLR0915, PLR0917  # long: the hot path (module doc)
        self,
        offer_id: str,
        seller_id: str,
        gpu: str,
        tier: str,
        price_micros: int,
        currency: str,
        gpus: int,
        *,
        now: Instant,
        billing: str = "hour",
        region: str | None = None,
        min_hours: int | None = None,
        available_until: Instant | None = None,
        interruptible_price_micros: int | None = None,
        notice_s: int = 120,
        provisioning_s: int = 0,
    ) -> Result:
        """A seller's offer arrives: it fills resting bids that pay its price, then rests.

        ``price_micros`` is the price of ``tier``; an on-demand offer with
        ``interruptible_price_micros`` also sells the same GPUs as interruptible at that price.
        ``provisioning_s`` (0: ready at the start) goes onto each of the offer's trades.
        """
        t = now if type(now) is int else epoch_micros(now)
        busy = bool(self._expiry) and self._expiry[0][0] <= t
        if busy:
            self._expire_due(t)
        until = None if available_until is None else epoch_micros(available_until)
        rates = self._rates
        if (
            offer_id in self._offers
            or tier not in OFFER_TIERS
            or gpus < 1
            or price_micros <= 0
            or currency not in rates
            or min_hours is not None
            or until is not None
            or interruptible_price_micros is not None
            or notice_s != DEFAULT_NOTICE_S
            or provisioning_s
        ):  # the common case above is surely valid; anything else gets the full check
            reason = offer_shape_problem(
                offer_id in self._offers, tier, gpus, price_micros, interruptible_price_micros
            ) or offer_terms_problem(
                currency, rates, min_hours, notice_s, until, t, provisioning_s=provisioning_s
            )
            if reason is not None:
                self._offer_out.append(OfferUpdate(offer_id, _OFFER_REJECTED, gpus, 0, 0, reason))
                return self._finish(reason)
        offer = OfferEntry(
            offer_id,
            seller_id,
            gpu,
            tier,
            price_micros,
            currency,
            gpus,
            billing if tier != _INTERRUPTIBLE else _SECOND,  # interruptible: per second
            region,
            min_hours or 0,
            until,
        )
        offer.level = self._levels.get(offer.level) or self._canonical(offer.level)
        book = self._books.get(gpu) or self._book(gpu)
        if notice_s != DEFAULT_NOTICE_S or interruptible_price_micros is not None or provisioning_s:
            offer.extra = PoolExtra(notice_s, provisioning_s=provisioning_s)
            if interruptible_price_micros is not None:  # two legs (rare)
                self._add_two_legs(offer, interruptible_price_micros, t)
                if until is not None:
                    self._push_expiry(until, OFFER, offer_id, offer)
                self._offer_out.append(offer_state(offer))
                return self._finish(None)
        rate = rates[currency]
        key = offer.key = (
            price_micros * rate if type(rate) is int else reference_price(price_micros, rate)
        )
        self._seq = offer.seq = offer.born = self._seq + 1
        # Bids rank by minus their limit: those at or below -key pay the price.
        live: BookSide[BidEntry] | None = None
        for side in book.bid_sides[tier]:
            keys = side.keys
            if keys and keys[-1] >= key:
                if live is None:
                    live = side
                else:  # bids of both the offer's tier and "any" pay it: merge (rare)
                    live = None
                    plan, _ = plan_for_offer(offer, book.bid_sides[tier], -key, self._reliability)
                    self._fill_from_bids(offer, plan, book, t)
                    break
        if live is not None:
            self._take_bids(offer, live, -key, t)
        traded = bool(self._fills)
        if traded and not offer.remaining:  # kept, exhausted: its leases may give GPUs back
            self._offers[offer_id] = offer
            if until is not None:
                self._push_expiry(until, OFFER, offer_id, offer)
            self._offer_out.append(offer_state(offer))
            return self._finish(None)
        remaining = offer.remaining
        update = _new(OfferUpdate, (offer_id, _OFFER_LIVE, gpus, offer.sold, remaining, None))
        asks = book.asks[tier]
        queue = asks.levels.get(key)
        if queue is None:
            asks.levels[key] = {offer: None}
            insort(asks.keys, -key)
        else:
            queue[offer] = None
        self._offers[offer_id] = offer
        level, depth = offer.level, self._depth
        level_gpus = depth[level] = depth.get(level, 0) + remaining
        if until is not None:
            self._push_expiry(until, OFFER, offer_id, offer)
        if busy or traded:
            self._touched[level] = None
            self._offer_out.append(update)
            return self._finish(None)
        # Nothing else happened in this command: hand out the result directly.
        change = _new(LevelChange, (level, level_gpus))
        return _new(Result, ((), (), (update,), (change,), None, ()))

    def change_offer(
        self,
        offer_id: str,
        *,
        now: Instant,
        price_micros: int | None = None,
        gpus: int | None = None,
        interruptible_price_micros: int | None = None,
    ) -> Result:
        """Re-price an offer's legs and/or set its capacity (leased GPUs included).

        ``price_micros`` is the price of the offer's tier; ``interruptible_price_micros``
        (on-demand offers only) re-prices the interruptible leg or adds one. A leg with a new
        price, or every leg when the free count grows, loses time priority (and may now fill
        resting bids); a lower count keeps it. A capacity below what is leased takes effect
        as leases end: no GPU is free until then (``Pools._change``).
        """
        t = self._begin(now)
        offer = self._offers.get(offer_id)
        if offer is None:
            return self._finish(_UNKNOWN_OFFER)
        twin = offer.twin
        reason = change_problem(
            offer.tier,
            offer.price_micros,
            None if twin is None else twin.price_micros,
            price_micros,
            gpus,
            interruptible_price_micros,
        )
        if reason is not None:
            return self._finish(reason)
        self._change(offer, t, price_micros, gpus, interruptible_price_micros)
        self._offer_out.append(offer_state(offer))
        return self._finish(None)

    def withdraw_offer(self, offer_id: str, *, now: Instant) -> Result:
        """The seller takes the offer's unsold GPUs off the market."""
        t = now if type(now) is int else epoch_micros(now)
        busy = bool(self._expiry) and self._expiry[0][0] <= t
        if busy:
            self._expire_due(t)
        offer = self._offers.get(offer_id)
        if offer is None:
            return self._finish(_UNKNOWN_OFFER)
        resting = offer.remaining > 0
        level_gpus = self._unrest_offer(offer)
        update = _new(OfferUpdate, (offer_id, _OFFER_WITHDRAWN, offer.gpus, offer.sold, 0, None))
        if busy or not resting or offer.twin is not None:
            if resting:
                self._touched[offer.level] = None
            self._offer_out.append(update)
            return self._finish(None)
        change = _new(LevelChange, (offer.level, level_gpus))
        return _new(Result, ((), (), (update,), (change,), None, ()))

    def place_order(  # noqa: C901, PLR0912, PLR0913, PLR0915  # long: the hot path (module doc)
        self,
        order_id: str,
        buyer_id: str,
        gpu: str,
        gpus: int,
        *,
        now: Instant,
        currency: str,
        order_type: str = OrderType.LIMIT,
        price_micros: int | None = None,
        tier: str = Tier.ANY,
        region: str | None = None,
        hours: int | None = None,
        time_in_force: str = TimeInForce.GTC,
        expires_at: Instant | None = None,
        min_reliability_bp: int | None = None,
    ) -> Result:
        """A (funded) bid arrives: it takes the best compatible offers, then rests or ends.

        ``price_micros`` is a limit order's limit or a market order's optional cap, in
        ``currency``. Market orders never rest; ``expires_at`` only matters for GTD.
        ``min_reliability_bp`` (0..10,000): only sellers with a rate at least this qualify.
        """
        t = now if type(now) is int else epoch_micros(now)
        busy = bool(self._expiry) and self._expiry[0][0] <= t
        if busy:
            self._expire_due(t)
        expiry = None if expires_at is None or time_in_force != _GTD else epoch_micros(expires_at)
        rates = self._rates
        if (
            order_id in self._orders
            or tier not in ORDER_TIERS
            or order_type not in ORDER_TYPES
            or time_in_force not in TIMES_IN_FORCE
            or gpus < 1
            or price_micros is None
            or price_micros <= 0
            or currency not in rates
            or hours is not None
            or time_in_force == _GTD
            or min_reliability_bp is not None
        ):  # the common case above is surely valid; anything else gets the full check
            reason = (
                order_shape_problem(order_id in self._orders, tier, order_type, time_in_force, gpus)
                or order_price_problem(order_type, price_micros, currency, rates)
                or order_terms_problem(time_in_force, hours, expiry, t, min_reliability_bp)
            )
            if reason is not None:
                self._order_out.append(
                    OrderUpdate(order_id, _ORDER_REJECTED, gpus, 0, 0, gpus, reason)
                )
                return self._finish(reason)
        if price_micros is None:
            bound = MARKET_BOUND
        else:
            rate = rates[currency]
            bound = (
                price_micros * rate if type(rate) is int else reference_price(price_micros, rate)
            )
        # The bid's entry as the rare paths and a resting remainder build it: one tuple, cheaper
        # than a call per command.
        fields = (
            order_id,
            buyer_id,
            gpu,
            tier,
            price_micros or 0,
            currency,
            gpus,
            region,
            hours,
            None,  # expires_at: set when it rests
            min_reliability_bp,
        )
        seq = self._seq = self._seq + 1
        book = self._books.get(gpu) or self._book(gpu)
        sides = book.ask_sides[tier]
        fok = time_in_force == _FOK
        bid = None
        filled = 0
        if tier == _ON_DEMAND and book.preemptable:  # may preempt interruptible leases (rare)
            bid = BidEntry(*fields)
            if not self._take_preempting(bid, book, bound, fok, t):
                self._order_out.append(
                    OrderUpdate(order_id, _ORDER_CANCELLED, gpus, 0, 0, gpus, _FOK_UNFILLABLE)
                )
                return self._finish(None)
            filled = bid.filled
            sides = ()
        live: BookSide[OfferEntry] | None = None
        for side in sides:  # asks rank by reference price: those at or below the bound
            keys = side.keys
            if keys and keys[-1] >= -bound:
                if live is None and not fok:
                    live = side
                    continue
                # FOK, or offers of both tiers within the bound (merged): plan first (rare).
                live = None
                bid = BidEntry(*fields)
                plan, total = plan_for_bid(bid, sides, bound, self._reliability)
                if total < gpus and fok:
                    break
                self._fill_from_offers(bid, plan, book, t)
                filled = bid.filled
                break
        if live is not None:
            hours_or_max = NO_HOURS if hours is None else hours
            filled = self._take_offers(
                live,
                bound,
                order_id,
                buyer_id,
                hours,
                hours_or_max,
                region,
                gpus,
                t,
                min_reliability_bp,
            )
        elif fok and filled < gpus:
            self._order_out.append(
                OrderUpdate(order_id, _ORDER_CANCELLED, gpus, 0, 0, gpus, _FOK_UNFILLABLE)
            )
            return self._finish(None)
        remaining = gpus - filled
        traded = bool(self._fills)
        if not remaining:
            self._order_out.append(
                _new(OrderUpdate, (order_id, _ORDER_FILLED, gpus, filled, 0, 0, None))
            )
        elif order_type == _MARKET or time_in_force == _IOC:
            self._order_out.append(
                _new(
                    OrderUpdate,
                    (
                        order_id,
                        _ORDER_CANCELLED,
                        gpus,
                        filled,
                        0,
                        remaining,
                        _UNFILLED_REMAINDER,
                    ),
                )
            )
        else:
            if bid is None:
                bid = BidEntry(*fields)
                bid.filled = filled
                bid.remaining = remaining
                bid.taken = len(self._fills)  # every fill of this command is this bid's
            bid.key = key = -bound
            bid.seq = seq
            bid.expires_at = expiry
            bid.level = self._levels.get(bid.level) or self._canonical(bid.level)
            bids = book.bids[tier]
            queue = bids.levels.get(key)
            if queue is None:
                bids.levels[key] = {bid: None}
                insort(bids.keys, -key)
            else:
                queue[bid] = None
            self._orders[order_id] = bid
            level, depth = bid.level, self._depth
            level_gpus = depth[level] = depth.get(level, 0) + remaining
            if expiry is not None:
                self._push_expiry(expiry, BID, order_id, bid)
            status = _ORDER_PARTIALLY_FILLED if filled else _ORDER_OPEN
            update = _new(OrderUpdate, (order_id, status, gpus, filled, remaining, 0, None))
            if not (busy or traded):
                # Nothing else happened in this command: hand out the result directly.
                change = _new(LevelChange, (level, level_gpus))
                return _new(Result, ((), (update,), (), (change,), None, ()))
            self._touched[level] = None
            self._order_out.append(update)
        return self._finish(None)

    def cancel_order(self, order_id: str, *, now: Instant) -> Result:
        """The buyer cancels a resting order's remainder."""
        t = now if type(now) is int else epoch_micros(now)
        busy = bool(self._expiry) and self._expiry[0][0] <= t
        if busy:
            self._expire_due(t)
        bid = self._orders.get(order_id)
        if bid is None:
            return self._finish(_UNKNOWN_ORDER)
        level_gpus = self._unrest_bid(bid)
        update = _new(
            OrderUpdate,
            (
                order_id,
                _ORDER_CANCELLED,
                bid.gpus,
                bid.filled,
                0,
                bid.remaining,
                _CANCEL_REQUESTED,
            ),
        )
        if busy:
            self._touched[bid.level] = None
            self._order_out.append(update)
            return self._finish(None)
        change = _new(LevelChange, (bid.level, level_gpus))
        return _new(Result, ((), (update,), (), (change,), None, ()))

    def expire(self, now: Instant) -> Result:
        """Remove GTD orders and offers whose time is up at ``now`` (every command does this)."""
        self._begin(now)
        return self._finish(None)

    def set_fx(self, rates: Mapping[str, object], *, now: Instant) -> Result:
        """Merge new FX rates, re-rank what rests in the changed currencies, and fill any
        bid that now reaches an offer (highest bid first; at the offer's price)."""
        t = self._begin(now)
        parsed = rates_from(rates)
        if parsed is None:
            return self._finish(_INVALID_FX_RATE)
        changed = {c for c, rate in parsed.items() if self._rates.get(c) != rate}
        self._rates.update(parsed)
        if changed:
            self._rerank(changed)
            self._uncross(t, self._orders.values())
        return self._finish(None)

    def set_seller_reliability(
        self,
        rates_bp: Mapping[str, object],
        *,
        now: Instant,
        totals: Mapping[str, object] | None = None,
    ) -> Result:
        """Merge sellers' reliability rates (seller id -> basis points, 0..10,000), each
        counted over ``totals[seller]`` leases (absent: 0); a seller's rate counted over
        fewer leases than the one held is older and ignored (counts only grow). When a rate
        rose (or is new), fill any bid with a minimum that now qualifies for an offer it
        reaches (highest bid first; at the offer's price). A rate that fell only keeps
        orders with a minimum away from that seller's pools from now on."""
        t = self._begin(now)
        parsed = reliability_from(rates_bp)
        counted = None if parsed is None else totals_from(totals or {}, parsed)
        if parsed is None or counted is None:
            return self._finish(_INVALID_RELIABILITY)
        known, held = self._reliability, self._reliability_totals
        rose = False
        for seller, rate in parsed.items():
            total = counted.get(seller, 0)
            if not newer(total, held.get(seller, 0)):
                continue
            rose = rose or rate > known.get(seller, UNRATED)
            known[seller] = rate
            if total:
                held[seller] = total
        if rose:
            self._uncross(t, [b for b in self._orders.values() if b.min_reliability_bp is not None])
        return self._finish(None)

    # Matching -------------------------------------------------------------------------------

    def _rerank(self, changed: set[str]) -> None:
        """Recompute reference keys in changed currencies; time priority is kept."""
        rates = self._rates
        for book in self._books.values():
            for ask_side in book.asks.values():
                offers = list(ask_side.entries())
                if any(o.currency in changed for o in offers):
                    for o in offers:
                        o.key = reference_price(o.price_micros, rates[o.currency])
                    ask_side.rebuild(offers)
            for bid_side in book.bids.values():
                bids = list(bid_side.entries())
                if any(b.currency in changed for b in bids):
                    for b in bids:
                        b.key = -reference_price(b.price_micros, rates[b.currency])
                    bid_side.rebuild(bids)

    def _uncross(self, t: int, bids: Iterable[BidEntry]) -> None:
        """After an FX move (or a seller's rate rose), these resting bids take the offers
        they now reach, best bid first."""
        reliability = self._reliability
        for bid in sorted(bids, key=PRIORITY):
            if self._orders.get(bid.order_id) is not bid:
                continue
            book = self._books[bid.gpu]
            plan, total = plan_for_bid(bid, book.ask_sides[bid.tier], -bid.key, reliability)
            if not plan:
                continue
            self._fill_from_offers(bid, plan, book, t)
            self._merge = True  # several bids may take one offer: report its last state
            self._level(bid.level, -total)
            if not bid.remaining:
                book.bids[bid.tier].remove(bid)
                del self._orders[bid.order_id]
            self._order_out.append(order_state(bid))
