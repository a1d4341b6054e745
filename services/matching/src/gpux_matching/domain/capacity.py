"""Leases ending, interruptible leases interrupted: the pool side of ``docs/CAPACITY.md``.

``release_lease`` lets a lease go: its GPUs go to the trades that preempted it (they hold
them now), GPUs of a reclaimed lease leave the capacity, GPUs beyond a lowered capacity are
retired, and the rest come back free (``Pools._give_back``). ``reclaim_lease`` interrupts an
interruptible lease for its seller. An arriving on-demand order preempts (``_take_preempting``):
after every free on-demand GPU within its limit, the interruptible leases of the pools whose
on-demand price is within it, cheapest first, then the oldest pool, the newest lease of a
pool first; each lease interrupted whole at the command's time plus the offer's notice,
the order's trade starting then. An order with a minimum reliability preempts only leases
of pools whose seller's rate meets it. This is the rare path; it may scan the book's pools.
"""

from __future__ import annotations

from gpux_contracts.capacity import InterruptionCause
from gpux_matching.domain.book import GpuBook
from gpux_matching.domain.entries import BidEntry, Lease, Notice, OfferEntry
from gpux_matching.domain.planning import plan_for_bid
from gpux_matching.domain.pools import Pools
from gpux_matching.domain.reliability import UNRATED
from gpux_matching.domain.results import Fill, Interruption, Result
from gpux_matching.domain.state import offer_state
from gpux_matching.domain.types import Reason, Side, Tier
from gpux_matching.domain.units import Instant, reference_price

_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)
_ON_DEMAND = str(Tier.ON_DEMAND)
_PREEMPTED = InterruptionCause.PREEMPTED
_RECLAIMED = InterruptionCause.RECLAIMED
_NOT_INTERRUPTIBLE = Reason.NOT_INTERRUPTIBLE
_UNKNOWN_LEASE = Reason.UNKNOWN_LEASE
_SIDE_BID = Side.BID

MICROS_PER_SECOND = 1_000_000

Victim = tuple[OfferEntry, str, Lease, int]
"""(pool, lease id, lease, GPUs the order takes of it) of one preempted lease."""


class Capacity(Pools):
    """Release, reclaim and preemption."""

    __slots__ = ()

    def release_lease(self, lease_id: str, offer_id: str, gpus: int, *, now: Instant) -> Result:
        """A lease ended (billing's ``lease.released``): its GPUs go back to its offer, to
        the trades that preempted it first; then free GPUs meet resting bids.

        A lease the book does not hold on that offer (a withdrawn or expired offer, a
        replay) changes nothing: the result's rejection is UNKNOWN_LEASE, and nothing else.
        ``gpus`` matters only for a lease sold before the book knew leases (legacy).
        """
        t = self._begin(now)
        pool = self._offers.get(offer_id)
        if pool is None:
            return self._finish(_UNKNOWN_LEASE)
        before = (pool.gpus, pool.sold)
        back = self._let_go(pool, lease_id, gpus)
        if back is None:
            return self._finish(_UNKNOWN_LEASE)
        twin = pool.twin
        if twin is not None:
            twin.gpus, twin.sold = pool.gpus, pool.sold
        self._give_back(pool, back, t)
        if back or before != (pool.gpus, pool.sold):
            self._offer_out.append(offer_state(pool))
        return self._finish(None)

    def reclaim_lease(self, offer_id: str, lease_id: str, *, now: Instant) -> Result:
        """The seller takes an interruptible lease's GPUs back: the lease is interrupted
        with the offer's notice, and when it ends its GPUs leave the offer's capacity."""
        t = self._begin(now)
        pool = self._offers.get(offer_id)
        lease = None if pool is None else pool.leases.get(lease_id)
        if pool is None or lease is None:
            return self._finish(_UNKNOWN_LEASE)
        extra = self._extra(pool)
        gpus, tier, buyer_id = lease
        if tier != _INTERRUPTIBLE or lease_id in extra.notices:
            return self._finish(_NOT_INTERRUPTIBLE)
        at = t + extra.notice_s * MICROS_PER_SECOND
        extra.notices[lease_id] = Notice(at, _RECLAIMED, {})
        self._interruptions.append(
            Interruption(
                lease_id,
                offer_id,
                buyer_id,
                pool.seller_id,
                pool.gpu,
                gpus,
                _RECLAIMED,
                t,
                at,
                (),
            )
        )
        return self._finish(None)

    def _let_go(self, pool: OfferEntry, lease_id: str, gpus: int) -> int | None:
        """Forget a lease of the pool and count what it held: the GPUs that come back free
        (None: the pool does not know the lease). Sets the primary leg's capacity and
        leased counts (the caller copies them to the twin)."""
        extra = pool.extra
        lease = pool.leases.pop(lease_id, None)
        if lease is None:
            if extra is None or not extra.legacy or lease_id in extra.gone:
                return None
            held = back = min(gpus, extra.legacy)
            extra.legacy -= back
            extra.gone.add(lease_id)
            pool.sold -= held
            return self._retire(pool, back)
        held = back = lease[0]
        if extra is not None:
            if extra.legacy:
                extra.gone.add(lease_id)
            victim = extra.claims.pop(lease_id, None)
            if victim is not None:  # a preempting trade before its start drops its claim
                del extra.notices[victim].claims[lease_id]
                return 0
            notice = extra.notices.pop(lease_id, None)
            if notice is not None and notice.cause == _RECLAIMED:
                pool.sold -= held
                pool.gpus -= held
                extra.cut = max(extra.cut - held, 0)
                return 0
            if notice is not None:  # its GPUs go to the trades that preempted it
                for trade_id in notice.claims:
                    del extra.claims[trade_id]
                claimed = sum(notice.claims.values())
                back -= claimed
                pool.sold += claimed
        pool.sold -= held
        return self._retire(pool, back)

    @staticmethod
    def _retire(pool: OfferEntry, back: int) -> int:
        """Of ``back`` GPUs coming back, those beyond a lowered capacity leave it; the rest
        are returned."""
        extra = pool.extra
        if extra is None or not extra.cut or not back:
            return back
        retired = min(back, extra.cut)
        extra.cut -= retired
        pool.gpus -= retired
        return back - retired

    # Preemption -----------------------------------------------------------------------------

    def _take_preempting(self, bid: BidEntry, book: GpuBook, bound: int, fok: bool, t: int) -> bool:
        """An on-demand taker ``bid`` (nothing filled yet) takes free on-demand GPUs within
        ``bound``, then preempts interruptible leases for the rest. False: a FOK order that
        cannot fill completely even so (nothing changed)."""
        plan, total = plan_for_bid(bid, book.ask_sides[_ON_DEMAND], bound, self._reliability)
        victims = self._victims(bid, book, bound, bid.remaining - total, t)
        if fok and total + sum(v[3] for v in victims) < bid.remaining:
            return False
        if plan:
            self._fill_from_offers(bid, plan, book, t)
        for victim in victims:
            self._preempt(bid, victim, t)
        return True

    def _victims(self, bid: BidEntry, book: GpuBook, bound: int, need: int, t: int) -> list[Victim]:
        """The leases ``bid`` preempts for ``need`` GPUs, in order (see the module doc). A
        pool whose window closes before the notice would end is never preempted: the
        on-demand lease would start after the seller stopped offering."""
        if need <= 0:
            return []
        rates, reliability = self._rates, self._reliability
        buyer, region, hours = bid.buyer_id, bid.region, bid.hours_or_max
        minimum = bid.min_reliability_bp
        pools: list[tuple[int, int, OfferEntry, list[tuple[str, Lease]]]] = []
        for pool in list(book.preemptable):
            extra = self._extra(pool)
            notices = extra.notices
            leases = [
                (lease_id, lease)
                for lease_id, lease in reversed(pool.leases.items())
                if lease[1] == _INTERRUPTIBLE and lease_id not in notices
            ]
            if not leases:
                del book.preemptable[pool]
                continue
            key = reference_price(pool.price_micros, rates[pool.currency])
            until = pool.available_until
            if (
                key > bound
                or (until is not None and until <= t + extra.notice_s * MICROS_PER_SECOND)
                or pool.seller_id == buyer
                or pool.min_hours > hours
                or (region is not None and pool.region != region)
                or (minimum is not None and reliability.get(pool.seller_id, UNRATED) < minimum)
            ):
                continue
            pools.append((key, pool.born, pool, leases))
        pools.sort(key=lambda item: (item[0], item[1]))
        victims: list[Victim] = []
        for _, _, pool, leases in pools:
            for lease_id, lease in leases:
                take = min(lease[0], need)
                victims.append((pool, lease_id, lease, take))
                need -= take
                if not need:
                    return victims
        return victims

    def _preempt(self, bid: BidEntry, victim: Victim, t: int) -> None:
        """Interrupt one lease for ``bid``: a trade at the pool's on-demand price that starts
        when the lease's notice ends, and its claim on the lease's GPUs."""
        pool, lease_id, (gpus, _, buyer_id), take = victim
        extra = self._extra(pool)
        at = t + extra.notice_s * MICROS_PER_SECOND
        bid.taken += 1
        order_id = bid.order_id
        trade_id = f"{order_id}:b{bid.taken}"
        self._fills.append(
            Fill(
                trade_id,
                order_id,
                pool.offer_id,
                bid.buyer_id,
                pool.seller_id,
                pool.gpu,
                pool.tier,
                take,
                pool.price_micros,
                pool.currency,
                pool.billing,
                bid.hours,
                _SIDE_BID,
                t,
                at,
                extra.provisioning_s,
            )
        )
        pool.leases[trade_id] = (take, _ON_DEMAND, bid.buyer_id)
        extra.notices[lease_id] = Notice(at, _PREEMPTED, {trade_id: take})
        extra.claims[trade_id] = lease_id
        self._interruptions.append(
            Interruption(
                lease_id,
                pool.offer_id,
                buyer_id,
                pool.seller_id,
                pool.gpu,
                gpus,
                _PREEMPTED,
                t,
                at,
                (trade_id,),
            )
        )
        bid.filled += take
        bid.remaining -= take
        self._offer_out.append(offer_state(pool))
        self._merge = True
