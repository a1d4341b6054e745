"""Offers as pools: legs entering the book, GPUs coming back, and changes of an offer.

A pool's legs rest on their books exactly while it has free GPUs. When GPUs come back to a
pool with none free, or a leg is re-priced, or the free count grows, the leg *enters* again:
a fresh book key, a new time priority (behind what rests at its price), and first it meets
the resting bids it crosses, in the order of ``docs/CAPACITY.md``: the on-demand leg meets
on-demand bids (and ``any`` bids when it is the only leg), then the interruptible leg meets
interruptible and ``any`` bids. A leg whose price and free count did not grow keeps its
place; no bid can cross it (it would have traded already).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpux_matching.domain.entries import OfferEntry, PoolExtra
from gpux_matching.domain.fills import Filling
from gpux_matching.domain.planning import plan_for_offer
from gpux_matching.domain.results import Level
from gpux_matching.domain.snapshot import twin_of
from gpux_matching.domain.types import Side, Tier
from gpux_matching.domain.units import reference_price

_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)  # a plain str: compares fastest
_ON_DEMAND = str(Tier.ON_DEMAND)
_SIDE_ASK = Side.ASK


def legs_of(pool: OfferEntry) -> tuple[OfferEntry, ...]:
    """A pool's legs, its primary (the on-demand leg, if it has one) first."""
    twin = pool.twin
    return (pool,) if twin is None else (pool, twin)


class Pools(Filling):
    """What happens to a pool as a whole: entering, GPUs back, changes by its seller."""

    __slots__ = ()

    def _extra(self, pool: OfferEntry) -> PoolExtra:
        """The pool's rare state, made now if it had none (shared by its legs)."""
        extra = pool.extra
        if extra is None:
            extra = pool.extra = PoolExtra()
            if pool.twin is not None:
                pool.twin.extra = extra
        return extra

    def _add_two_legs(self, offer: OfferEntry, interruptible_price: int, t: int) -> None:
        """A new on-demand offer that also sells its GPUs as interruptible: both legs enter
        (on-demand first) and the pool is kept."""
        self._extra(offer)
        twin = twin_of(offer, interruptible_price)
        twin.level = self._canonical(twin.level)
        self._offers[offer.offer_id] = offer
        self._enter(legs_of(offer), t)
        offer.born = twin.born = offer.seq

    def _enter(self, legs: Sequence[OfferEntry], t: int) -> None:
        """Legs not on the book enter it: fresh keys and time priority, the bids they cross
        met first (in order), then the legs rest while GPUs are free."""
        rates = self._rates
        for leg in legs:
            leg.key = reference_price(leg.price_micros, rates[leg.currency])
            self._seq = leg.seq = self._seq + 1
        book = self._books[legs[0].gpu]
        for leg in legs:
            if not leg.remaining:
                break
            if leg.twin is None or leg.tier == _INTERRUPTIBLE:
                sides = book.bid_sides[leg.tier]
            else:  # an on-demand leg with an interruptible twin leaves "any" bids to it
                sides = (book.bids[_ON_DEMAND],)
            plan, _ = plan_for_offer(leg, sides, -leg.key, self._reliability)
            if plan:
                self._fill_from_bids(leg, plan, book, t)
        for leg in legs:
            if leg.remaining:
                self._rest_leg(leg, book)
                self._touched[leg.level] = None

    def _give_back(self, pool: OfferEntry, gpus: int, t: int) -> None:
        """``gpus`` come back to the pool's free count: legs that had none free enter the
        book again (and meet bids); resting legs keep their place and show more."""
        if not gpus:
            return
        legs = legs_of(pool)
        was = pool.remaining
        for leg in legs:
            leg.remaining = was + gpus
        if was:
            for leg in legs:
                self._level(leg.level, gpus)
        else:
            self._enter(legs, t)

    def _change(
        self,
        pool: OfferEntry,
        t: int,
        price_micros: int | None,
        gpus: int | None,
        interruptible_price: int | None,
    ) -> None:
        """Re-price legs and/or set the capacity (``change_offer``, validated).

        A capacity below what is leased keeps the pool at what is leased, with no free GPU,
        and retires GPUs as they come back (``PoolExtra.cut``). A leg re-priced, or every
        leg when the free count grows, loses its time priority; a leg left as it was, or
        showing fewer free GPUs, keeps it.
        """
        old_free, leased = pool.remaining, pool.sold
        capacity, free = pool.gpus, old_free
        if gpus is not None:
            cut = max(leased - gpus, 0)
            capacity, free = max(gpus, leased), max(gpus - leased, 0)
            if cut or pool.extra is not None:
                self._extra(pool).cut = cut
        new_twin = None
        if interruptible_price is not None and pool.twin is None:
            self._extra(pool)
            new_twin = twin_of(pool, interruptible_price)
            new_twin.level = self._canonical(new_twin.level)
            new_twin.remaining = 0  # not on the book yet: it enters below
        prices = (price_micros, interruptible_price)
        entering = [
            leg
            for leg, price in zip(legs_of(pool), prices, strict=False)
            if self._change_leg(leg, price, capacity, old_free, free)
        ]
        if new_twin is not None:
            new_twin.born = pool.born
        if entering:
            self._enter(entering, t)

    def _change_leg(
        self, leg: OfferEntry, price: int | None, capacity: int, old_free: int, free: int
    ) -> bool:
        """Set one leg's price and counts; whether it must enter the book (again)."""
        repriced = price is not None and price != leg.price_micros
        resting = leg.remaining > 0
        if resting and (repriced or free > old_free or not free):
            self._unrest_leg(leg)
            self._touched[leg.level] = None
            resting = False
        elif resting:
            self._level(leg.level, free - old_free)
        if repriced and price is not None:
            leg.price_micros = price
            leg.level = self._canonical(Level(leg.gpu, leg.tier, _SIDE_ASK, leg.currency, price))
        leg.gpus, leg.remaining = capacity, free
        return bool(free) and not resting
