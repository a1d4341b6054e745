"""A plainly written reference model of the matching engine, capacity included.

The model keeps every offer's pool and every resting bid in flat dicts and answers each
command by filtering and sorting them: slow, and obviously right. A pool's leased GPUs are
recounted from its leases every time they are needed (never a running counter), its free
GPUs are capacity minus leased, and its legs are on the book exactly while GPUs are free.
docs/CAPACITY.md is the specification it follows.

"Crossed", precisely: a leg ``o`` on the book and a resting bid ``b`` cross when they are for
the same GPU, ``b``'s tier is ``o``'s tier or ``any``, ``b`` has no region or ``o``'s region,
``b``'s hours are open-ended or at least ``o``'s minimum, ``b``'s buyer is not ``o``'s
seller, ``b`` has no minimum reliability or ``o``'s seller has a rate at least that high, and
``o``'s reference price is at or below ``b``'s reference limit. Such a pair would have traded,
so it must never exist once a command returns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from gpux_contracts.capacity import InterruptionCause
from gpux_matching.domain import (
    AddOffer,
    CancelOrder,
    ChangeOffer,
    Command,
    Fill,
    Interruption,
    MatchingEngine,
    OfferStatus,
    OfferUpdate,
    OrderStatus,
    OrderUpdate,
    PlaceOrder,
    Reason,
    ReclaimLease,
    ReleaseLease,
    SetFx,
    SetSellerReliability,
    Side,
    WithdrawOffer,
)

OD, INT, ANY = "on_demand", "interruptible", "any"
MICROS_PER_SECOND = 1_000_000


def ref(price_micros: int, rate: int | Decimal) -> int:
    value = Decimal(price_micros) * Decimal(rate)
    return int(value.to_integral_value(rounding=ROUND_HALF_EVEN))


@dataclass
class MLease:
    gpus: int
    tier: str
    buyer: str
    interrupt_at: int | None = None
    cause: InterruptionCause | None = None
    claims: dict[str, int] = field(default_factory=dict)
    """Preempting trade -> the GPUs it takes of this lease when it ends."""
    waits_on: str | None = None
    """A preempting trade: the lease it takes its GPUs from, while that one runs."""


@dataclass
class Leg:
    """One leg of a pool as the book shows it."""

    offer_id: str
    seller: str
    gpu: str
    tier: str
    price: int
    currency: str
    region: str | None
    min_hours: int | None
    seq: int
    free: int


@dataclass
class MOffer:
    """An offer's pool; ``tier``/``price``/``seq`` are its primary leg's."""

    id: str
    seller: str
    gpu: str
    tier: str
    price: int
    currency: str
    capacity: int
    billing: str
    region: str | None
    min_hours: int | None
    until: int | None
    seq: int = 0
    born: int = 0
    int_price: int | None = None
    int_seq: int = 0
    notice: int = 120
    cut: int = 0
    legacy: int = 0
    leases: dict[str, MLease] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    taken: int = 0

    @property
    def leased(self) -> int:
        held = sum(lease.gpus for lease in self.leases.values() if lease.waits_on is None)
        return held + self.legacy

    @property
    def free(self) -> int:
        return self.capacity - self.leased

    # The engine's words for the same counts.
    @property
    def gpus(self) -> int:
        return self.capacity

    @property
    def sold(self) -> int:
        return self.leased

    @property
    def remaining(self) -> int:
        return self.free

    def legs(self) -> list[Leg]:
        """Every leg, primary first (on the book or not)."""
        legs = [self._leg(self.tier, self.price, self.seq)]
        if self.int_price is not None:
            legs.append(self._leg(INT, self.int_price, self.int_seq))
        return legs

    def _leg(self, tier: str, price: int, seq: int) -> Leg:
        return Leg(
            self.id,
            self.seller,
            self.gpu,
            tier,
            price,
            self.currency,
            self.region,
            self.min_hours,
            seq,
            self.free,
        )

    def billing_of(self, tier: str) -> str:
        return "second" if tier == INT else self.billing


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
    min_bp: int | None = None
    """The minimum reliability of the sellers it may take from (basis points)."""

    @property
    def remaining(self) -> int:
        return self.gpus - self.filled


@dataclass
class Out:
    fills: list[Fill] = field(default_factory=list)
    orders: list[OrderUpdate] = field(default_factory=list)
    offers: list[OfferUpdate] = field(default_factory=list)
    rejection: Reason | None = None
    interruptions: list[Interruption] = field(default_factory=list)


def compatible(  # noqa: PLR0917 - one argument per rule
    b: MBid,
    gpu: str,
    seller: str,
    region: str | None,
    min_hours: int | None,
    reliability: Mapping[str, int],
) -> bool:
    return (
        b.gpu == gpu
        and b.buyer != seller
        and (b.region is None or b.region == region)
        and (b.hours is None or min_hours is None or b.hours >= min_hours)
        and (b.min_bp is None or (seller in reliability and reliability[seller] >= b.min_bp))
    )


def may_trade(b: MBid, leg: Leg, reliability: Mapping[str, int]) -> bool:
    return b.tier in (leg.tier, ANY) and compatible(
        b, leg.gpu, leg.seller, leg.region, leg.min_hours, reliability
    )


def bid_fill(
    b: MBid, o: MOffer, tier: str, price: int, *, gpus: int, now: int, starts_at: int
) -> Fill:
    """Bid ``b``'s next trade, of ``gpus`` from ``o``'s leg at ``tier`` and ``price`` (the
    offer's currency and billing); it counts the trade among the bid's."""
    b.taken += 1
    return Fill(
        f"{b.id}:b{b.taken}",
        b.id,
        o.id,
        b.buyer,
        o.seller,
        o.gpu,
        tier,
        gpus,
        price,
        o.currency,
        o.billing_of(tier),
        b.hours,
        Side.BID,
        now,
        starts_at,
    )


def interruption(
    o: MOffer,
    lease_id: str,
    cause: InterruptionCause,
    *,
    now: int,
    at: int,
    waiting: tuple[str, ...],
) -> Interruption:
    """The notice that ``o``'s lease ``lease_id`` ends ``at``, for ``cause``."""
    lease = o.leases[lease_id]
    return Interruption(
        lease_id, o.id, lease.buyer, o.seller, o.gpu, lease.gpus, cause, now, at, waiting
    )


def last_of_each(updates: list[OfferUpdate]) -> list[OfferUpdate]:
    """One update per offer, its last, in the order of those last updates."""
    last: dict[str, OfferUpdate] = {}
    for update in updates:
        last.pop(update.offer_id, None)
        last[update.offer_id] = update
    return list(last.values())


class Model:
    """Flat dicts, linear scans, sorting on every command."""

    def __init__(self, rates: dict[str, int | Decimal]) -> None:
        self.rates = dict(rates)
        self.reliability: dict[str, int] = {}
        """Each rated seller's rate (basis points)."""
        self.totals: dict[str, int] = {}
        """The total each seller's rate was counted over (none given: 0)."""
        self.offers: dict[str, MOffer] = {}
        self.bids: dict[str, MBid] = {}
        self.seq = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def lref(self, leg: Leg) -> int:
        return ref(leg.price, self.rates[leg.currency])

    def bref(self, b: MBid) -> int:
        assert b.price is not None
        return ref(b.price, self.rates[b.currency])

    def offer_update(self, o: MOffer, status: OfferStatus | None = None) -> OfferUpdate:
        if status is None:
            status = OfferStatus.LIVE if o.free else OfferStatus.EXHAUSTED
        free = o.free if status in (OfferStatus.LIVE, OfferStatus.EXHAUSTED) else 0
        return OfferUpdate(o.id, status, o.capacity, o.leased, free, None)

    def bid_update(self, b: MBid) -> OrderUpdate:
        status = (
            OrderStatus.FILLED
            if not b.remaining
            else OrderStatus.PARTIALLY_FILLED
            if b.filled
            else OrderStatus.OPEN
        )
        return OrderUpdate(b.id, status, b.gpus, b.filled, b.remaining, 0, None)

    def bid_cancelled(self, b: MBid, reason: Reason) -> OrderUpdate:
        """``b``'s rest cancelled for ``reason`` (what it filled stays filled)."""
        return OrderUpdate(b.id, OrderStatus.CANCELLED, b.gpus, b.filled, 0, b.remaining, reason)

    def legs_on_book(self) -> list[tuple[MOffer, Leg]]:
        return [(o, leg) for o in self.offers.values() if o.free for leg in o.legs()]

    # Commands -------------------------------------------------------------------------------

    def run(self, c: Command) -> Out:
        out = Out()
        assert isinstance(c.now, int)
        self.expire(c.now, out)
        handlers: dict[type[Any], Any] = {
            AddOffer: self.add_offer,
            ChangeOffer: self.change_offer,
            WithdrawOffer: self.withdraw,
            ReleaseLease: self.release,
            ReclaimLease: self.reclaim,
            PlaceOrder: self.place_order,
            CancelOrder: self.cancel,
            SetFx: self.set_fx,
            SetSellerReliability: self.set_reliability,
        }
        handler = handlers.get(type(c))
        if handler is not None:
            handler(c, out)
        out.offers = last_of_each(out.offers)
        return out

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
                out.offers.append(self.offer_update(o, OfferStatus.EXPIRED))
            else:
                b = self.bids.pop(entry_id)
                out.orders.append(
                    OrderUpdate(b.id, OrderStatus.EXPIRED, b.gpus, b.filled, 0, b.remaining, None)
                )

    def withdraw(self, c: WithdrawOffer, out: Out) -> None:
        o = self.offers.pop(c.offer_id, None)
        if o is None:
            out.rejection = Reason.UNKNOWN_OFFER
        else:
            out.offers.append(self.offer_update(o, OfferStatus.WITHDRAWN))

    def cancel(self, c: CancelOrder, out: Out) -> None:
        b = self.bids.pop(c.order_id, None)
        if b is None:
            out.rejection = Reason.UNKNOWN_ORDER
            return
        out.orders.append(self.bid_cancelled(b, Reason.CANCEL_REQUESTED))

    # A bid takes offers ---------------------------------------------------------------------

    def bid_plan(self, b: MBid, bound: int) -> list[tuple[MOffer, Leg, int]]:
        """Legs a bid reaches, cheapest then earliest, and what each gives (a pool gives at
        most its free GPUs over both its legs)."""
        reachable = [
            (o, leg)
            for o, leg in self.legs_on_book()
            if may_trade(b, leg, self.reliability) and self.lref(leg) <= bound
        ]
        reachable.sort(key=lambda item: (self.lref(item[1]), item[1].seq))
        need = b.remaining
        used: Counter[str] = Counter()
        plan = []
        for o, leg in reachable:
            if not need:
                break
            n = min(need, o.free - used[o.id])
            if n <= 0:
                continue
            used[o.id] += n
            need -= n
            plan.append((o, leg, n))
        return plan

    def bid_takes(self, b: MBid, plan: list[tuple[MOffer, Leg, int]], now: int, out: Out) -> None:
        for o, leg, n in plan:
            fill = bid_fill(b, o, leg.tier, leg.price, gpus=n, now=now, starts_at=now)
            out.fills.append(fill)
            o.leases[fill.trade_id] = MLease(n, leg.tier, b.buyer)
            b.filled += n
            out.offers.append(self.offer_update(o))

    def victims(self, b: MBid, bound: int, need: int, now: int) -> list[tuple[MOffer, str, int]]:
        """Interruptible leases an on-demand bid preempts for ``need`` GPUs, in order; never
        of a pool whose window closes before the notice would end."""
        pools = [
            o
            for o in self.offers.values()
            if o.tier == OD
            and o.int_price is not None
            and (o.until is None or o.until > now + o.notice * MICROS_PER_SECOND)
            and compatible(b, o.gpu, o.seller, o.region, o.min_hours, self.reliability)
            and ref(o.price, self.rates[o.currency]) <= bound
        ]
        pools.sort(key=lambda o: (ref(o.price, self.rates[o.currency]), o.born))
        out = []
        for o in pools:
            for lease_id, lease in reversed(list(o.leases.items())):
                if need and lease.tier == INT and lease.interrupt_at is None:
                    take = min(need, lease.gpus)
                    need -= take
                    out.append((o, lease_id, take))
        return out

    def preempt(self, b: MBid, victims: list[tuple[MOffer, str, int]], now: int, out: Out) -> None:
        for o, lease_id, take in victims:
            lease = o.leases[lease_id]
            at = now + o.notice * MICROS_PER_SECOND
            fill = bid_fill(b, o, OD, o.price, gpus=take, now=now, starts_at=at)
            trade_id = fill.trade_id
            out.fills.append(fill)
            o.leases[trade_id] = MLease(take, OD, b.buyer, waits_on=lease_id)
            lease.interrupt_at, lease.cause = at, InterruptionCause.PREEMPTED
            lease.claims[trade_id] = take
            out.interruptions.append(
                interruption(
                    o, lease_id, InterruptionCause.PREEMPTED, now=now, at=at, waiting=(trade_id,)
                )
            )
            b.filled += take
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
            min_bp=c.min_reliability_bp,
        )
        bound = 1 << 200 if c.price_micros is None else self.bref(b)
        now = c.now
        assert isinstance(now, int)
        plan = self.bid_plan(b, bound)
        planned = sum(n for _, _, n in plan)
        victims = self.victims(b, bound, c.gpus - planned, now) if c.tier == OD else []
        if c.time_in_force == "fok" and planned + sum(v[2] for v in victims) < c.gpus:
            out.orders.append(
                OrderUpdate(
                    b.id, OrderStatus.CANCELLED, b.gpus, 0, 0, b.gpus, Reason.FOK_UNFILLABLE
                )
            )
            return
        self.bid_takes(b, plan, now, out)
        self.preempt(b, victims, now, out)
        if not b.remaining:
            out.orders.append(self.bid_update(b))
        elif c.order_type == "market" or c.time_in_force == "ioc":
            out.orders.append(self.bid_cancelled(b, Reason.UNFILLED_REMAINDER))
        else:
            self.bids[b.id] = b
            out.orders.append(self.bid_update(b))

    def set_fx(self, c: SetFx, out: Out) -> None:
        self.rates.update(c.rates)  # type: ignore[arg-type]
        assert isinstance(c.now, int)
        self.uncross(c.now, out)

    def set_reliability(self, c: SetSellerReliability, out: Out) -> None:
        """Each seller's rate, unless the one held was counted over more leases."""
        totals: dict[str, Any] = dict(c.totals or {})
        for seller, rate in c.rates_bp.items():
            total = totals.get(seller, 0)
            if total >= self.totals.get(seller, 0):
                self.reliability[seller] = rate  # type: ignore[assignment]
                self.totals[seller] = total
        assert isinstance(c.now, int)
        self.uncross(c.now, out)

    def uncross(self, now: int, out: Out) -> None:
        """Every resting bid, best first, takes what it reaches now."""
        for b in sorted(self.bids.values(), key=lambda b: (-self.bref(b), b.seq)):
            if self.bids.get(b.id) is not b:
                continue
            plan = self.bid_plan(b, self.bref(b))
            if plan:
                self.bid_takes(b, plan, now, out)
                if not b.remaining:
                    del self.bids[b.id]
                out.orders.append(self.bid_update(b))

    # An offer's legs meet bids --------------------------------------------------------------

    def enter(self, o: MOffer, tiers: list[str], now: int, out: Out) -> None:
        """Legs of these tiers enter the book: new time priority each, then, in order, they
        meet the bids they cross."""
        for tier in tiers:
            if tier == INT and o.tier == OD:
                o.int_seq = self.next_seq()
            else:
                o.seq = self.next_seq()
        for leg in o.legs():
            if leg.tier in tiers and o.free:
                self.leg_takes(o, leg, now, out)

    def leg_takes(self, o: MOffer, leg: Leg, now: int, out: Out) -> None:
        two_legs = o.int_price is not None
        tiers = (OD,) if two_legs and leg.tier == OD else (leg.tier, ANY)
        price = self.lref(leg)
        reachable = [
            b
            for b in self.bids.values()
            if b.tier in tiers
            and compatible(b, o.gpu, o.seller, o.region, o.min_hours, self.reliability)
            and self.bref(b) >= price
        ]
        reachable.sort(key=lambda b: (-self.bref(b), b.seq))
        for b in reachable:
            if not o.free:
                break
            n = min(o.free, b.remaining)
            o.taken += 1
            trade_id = f"{o.id}:a{o.taken}"
            assert b.price is not None
            out.fills.append(
                Fill(
                    trade_id,
                    b.id,
                    o.id,
                    b.buyer,
                    o.seller,
                    o.gpu,
                    leg.tier,
                    n,
                    b.price,
                    b.currency,
                    o.billing_of(leg.tier),
                    b.hours,
                    Side.ASK,
                    now,
                    now,
                )
            )
            o.leases[trade_id] = MLease(n, leg.tier, b.buyer)
            b.filled += n
            if not b.remaining:
                del self.bids[b.id]
            out.orders.append(self.bid_update(b))

    def add_offer(self, c: AddOffer, out: Out) -> None:
        assert isinstance(c.available_until, int | None)
        assert isinstance(c.now, int)
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
            int_price=c.interruptible_price_micros,
            notice=c.notice_s,
        )
        self.enter(o, [leg.tier for leg in o.legs()], c.now, out)
        o.born = o.seq
        self.offers[o.id] = o
        out.offers.append(self.offer_update(o))

    def change_offer(self, c: ChangeOffer, out: Out) -> None:
        o = self.offers.get(c.offer_id)
        if o is None:
            out.rejection = Reason.UNKNOWN_OFFER
            return
        price = o.price if c.price_micros is None else c.price_micros
        int_price = (
            o.int_price if c.interruptible_price_micros is None else (c.interruptible_price_micros)
        )
        if int_price is not None and (o.tier == INT or int_price > price):
            out.rejection = Reason.INVALID_PRICE
            return
        old_free, leased, had_twin = o.free, o.leased, o.int_price is not None
        if c.gpus is not None:
            o.capacity, o.cut = max(c.gpus, leased), max(leased - c.gpus, 0)
        new_free = o.free
        entering = []
        for tier, was, new, existed in (
            (o.tier, o.price, price, True),
            (INT, o.int_price, int_price, had_twin),
        ):
            if new is None:
                continue
            resting = existed and old_free > 0
            keeps = resting and new == was and 0 < new_free <= old_free
            if not keeps and new_free:
                entering.append(tier)
        o.price, o.int_price = price, int_price
        assert isinstance(c.now, int)
        self.enter(o, entering, c.now, out)
        out.offers.append(self.offer_update(o))

    # Leases end, leases are reclaimed ---------------------------------------------------------

    def release(self, c: ReleaseLease, out: Out) -> None:
        o = self.offers.get(c.offer_id)
        if o is None:
            out.rejection = Reason.UNKNOWN_LEASE
            return
        before = (o.capacity, o.leased, o.free)
        lease = o.leases.get(c.lease_id)
        if lease is None:
            if not o.legacy or c.lease_id in o.gone:
                out.rejection = Reason.UNKNOWN_LEASE
                return
            back = min(c.gpus, o.legacy)
            o.legacy -= back
            o.gone.add(c.lease_id)
        else:
            if o.legacy:
                o.gone.add(c.lease_id)
            del o.leases[c.lease_id]
            if lease.waits_on is not None:  # a preempting trade before its start
                del o.leases[lease.waits_on].claims[c.lease_id]
                return
            if lease.cause == InterruptionCause.RECLAIMED:
                o.capacity -= lease.gpus
                o.cut = max(o.cut - lease.gpus, 0)
                back = 0
            else:
                for trade_id in lease.claims:
                    o.leases[trade_id].waits_on = None
                back = lease.gpus - sum(lease.claims.values())
        retired = min(back, o.cut)
        o.cut -= retired
        o.capacity -= retired
        assert isinstance(c.now, int)
        if not before[2] and o.free:
            self.enter(o, [leg.tier for leg in o.legs()], c.now, out)
        if back - retired or before[:2] != (o.capacity, o.leased):
            out.offers.append(self.offer_update(o))

    def reclaim(self, c: ReclaimLease, out: Out) -> None:
        o = self.offers.get(c.offer_id)
        lease = None if o is None else o.leases.get(c.lease_id)
        if o is None or lease is None:
            out.rejection = Reason.UNKNOWN_LEASE
            return
        if lease.tier != INT or lease.interrupt_at is not None:
            out.rejection = Reason.NOT_INTERRUPTIBLE
            return
        assert isinstance(c.now, int)
        at = c.now + o.notice * MICROS_PER_SECOND
        lease.interrupt_at, lease.cause = at, InterruptionCause.RECLAIMED
        out.interruptions.append(
            interruption(o, c.lease_id, InterruptionCause.RECLAIMED, now=c.now, at=at, waiting=())
        )

    # Views ------------------------------------------------------------------------------------

    def depth(self) -> Counter[tuple[Any, ...]]:
        levels: Counter[tuple[Any, ...]] = Counter()
        for _, leg in self.legs_on_book():
            levels[(leg.gpu, leg.tier, "ask", leg.currency, leg.price)] += leg.free
        for b in self.bids.values():
            levels[(b.gpu, b.tier, "bid", b.currency, b.price)] += b.remaining
        return levels

    def lease_ids(self) -> list[tuple[str, str, int]]:
        """(offer id, lease id, GPUs) of every lease the model's pools know, in order."""
        return [
            (o.id, lease_id, lease.gpus)
            for o in sorted(self.offers.values(), key=lambda o: o.id)
            for lease_id, lease in o.leases.items()
        ]


# The engine's state, read from its snapshot (not from the model) ----------------------------


def engine_legs(engine: MatchingEngine) -> list[Leg]:
    """Every leg on the engine's book (its pool has free GPUs), read from its snapshot."""
    legs = []
    for o in engine.snapshot()["offers"]:
        if not o["remaining"]:
            continue
        prices = [(o["tier"], o["price_micros"], o["seq"])]
        if o["interruptible_price_micros"] is not None:
            prices.append((INT, o["interruptible_price_micros"], o["interruptible_seq"]))
        legs += [
            Leg(
                o["offer_id"],
                o["seller_id"],
                o["gpu"],
                tier,
                price,
                o["currency"],
                o["region"],
                o["min_hours"],
                seq,
                o["remaining"],
            )
            for tier, price, seq in prices
        ]
    return legs


def engine_bids(engine: MatchingEngine) -> dict[str, MBid]:
    """The engine's resting bids, read from its snapshot."""
    return {
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
            b["min_reliability_bp"],
        )
        for b in engine.snapshot()["orders"]
    }


def crossed_pairs(engine: MatchingEngine) -> list[tuple[str, str]]:
    """Resting bid and leg pairs on the engine's book that would trade (see top)."""
    legs, bids = engine_legs(engine), engine_bids(engine)
    rates, reliability = engine.rates, engine.reliability
    return [
        (b.id, leg.offer_id)
        for b in bids.values()
        for leg in legs
        if may_trade(b, leg, reliability)
        and ref(leg.price, rates[leg.currency]) <= ref(b.price or 0, rates[b.currency])
    ]
