"""Filling: one trade per resting entry, at the resting side's price.

``_take_offers`` / ``_take_bids`` walk one book side from its best level and fill as they go
(the usual case: one side within the taker's bound, no FOK check needed), passing over what
the taker may not trade with (its own account, another region, minimum hours above the
rental, a seller below a bid's minimum reliability, or without a rate). They inline depth
bookkeeping, status updates and taking entries off the book: they run once per fill, the
hottest code in the engine. ``_fill_from_offers`` / ``_fill_from_bids`` apply a plan made
beforehand (FOK, takers that meet two sides at once, re-priced offers, FX moves).

Every fill registers its lease (trade id -> GPUs, tier, buyer) in the offer's pool and carries
the pool's provisioning timeout (``PoolExtra``: 0 when the pool has no rare state). A fill on
one leg of a two-leg pool takes the same GPUs from the other leg: ``_mirror`` copies the
counts and keeps the other leg's level (or takes it off the book when no GPU is free).
"""

from __future__ import annotations

from gpux_matching.domain.book import BookSide, GpuBook
from gpux_matching.domain.entries import BidEntry, OfferEntry
from gpux_matching.domain.reliability import UNRATED
from gpux_matching.domain.results import Fill, OfferUpdate, OrderUpdate
from gpux_matching.domain.state import EngineState, new_tuple
from gpux_matching.domain.types import OfferStatus, OrderStatus, Side, Tier

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_SIDE_ASK = Side.ASK
_SIDE_BID = Side.BID
_OFFER_EXHAUSTED = OfferStatus.EXHAUSTED
_OFFER_LIVE = OfferStatus.LIVE
_ORDER_FILLED = OrderStatus.FILLED
_ORDER_PARTIALLY_FILLED = OrderStatus.PARTIALLY_FILLED
_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)  # a plain str: compares fastest

_new = new_tuple


class Filling(EngineState):
    """The engine's fill loops, for a taker bid and for a taker offer."""

    __slots__ = ()

    def _take_offers(  # noqa: C901, PLR0912, PLR0913, PLR0915, PLR0917  # long: the hottest loop (module doc)
        self,
        side: BookSide[OfferEntry],
        bound: int,
        order_id: str,
        buyer_id: str,
        hours: int | None,
        hours_or_max: int,
        region: str | None,
        need: int,
        t: int,
        minimum: int | None = None,
    ) -> int:
        """A new bid (no fills yet) takes compatible offers of ``side`` in price-time order
        while their key is at most ``bound``; returns the GPUs filled (trade ids count from 1).
        ``minimum``: the bid's minimum reliability (None: any seller).
        """
        fills, out, depth, touched = self._fills, self._offer_out, self._depth, self._touched
        keys, levels = side.keys, side.levels
        wanted = need
        taken = 0
        i = len(keys)
        while i:
            i -= 1
            key = -keys[i]
            if key > bound:
                break
            queue = levels[key]
            gone: list[OfferEntry] | None = None
            for offer in queue:
                if (
                    offer.seller_id == buyer_id
                    or offer.min_hours > hours_or_max
                    or (region is not None and offer.region != region)
                    or (
                        minimum is not None
                        and self._reliability.get(offer.seller_id, UNRATED) < minimum
                    )
                ):
                    continue
                have = offer.remaining
                n = have if have < need else need
                need -= n
                taken += 1
                offer_id = offer.offer_id
                trade_id = f"{order_id}:b{taken}"
                tier = offer.tier
                extra = offer.extra
                fills.append(
                    _new(
                        Fill,
                        (
                            trade_id,
                            order_id,
                            offer_id,
                            buyer_id,
                            offer.seller_id,
                            offer.gpu,
                            tier,
                            n,
                            offer.price_micros,
                            offer.currency,
                            offer.billing,
                            hours,
                            _SIDE_BID,
                            t,
                            t,
                            0 if extra is None else extra.provisioning_s,
                        ),
                    )
                )
                offer.leases[trade_id] = (n, tier, buyer_id)
                level = offer.level
                level_gpus = depth[level] - n
                if level_gpus:
                    depth[level] = level_gpus
                else:
                    del depth[level]
                touched[level] = None
                sold = offer.sold = offer.sold + n
                if n < have:
                    left = offer.remaining = have - n
                    if offer.twin is not None:
                        self._twin_sold(offer)
                    out.append(
                        _new(OfferUpdate, (offer_id, _OFFER_LIVE, offer.gpus, sold, left, None))
                    )
                    break
                offer.remaining = 0
                if offer.twin is not None:
                    self._twin_sold(offer)
                out.append(
                    _new(OfferUpdate, (offer_id, _OFFER_EXHAUSTED, offer.gpus, sold, 0, None))
                )
                if gone is None:
                    gone = [offer]
                else:
                    gone.append(offer)
                if not need:
                    break
            if gone is not None:
                if len(gone) == len(queue):
                    del levels[key]
                    del keys[i]
                else:
                    for offer in gone:
                        del queue[offer]
            if not need:
                break
        return wanted - need

    def _take_bids(  # noqa: C901, PLR0912, PLR0915  # long: the hottest loop (module doc)
        self, offer: OfferEntry, side: BookSide[BidEntry], bound: int, t: int
    ) -> None:
        """A new offer fills compatible bids of ``side`` in price-time order while their key
        is at most ``bound``, at each bid's limit."""
        fills, out, depth, touched = self._fills, self._order_out, self._depth, self._touched
        orders = self._orders
        keys, levels = side.keys, side.levels
        offer_id, seller_id, taken = offer.offer_id, offer.seller_id, offer.taken
        gpu, tier, billing = offer.gpu, offer.tier, offer.billing
        region, min_hours, leases = offer.region, offer.min_hours, offer.leases
        provisioning_s = 0 if offer.extra is None else offer.extra.provisioning_s
        need = wanted = offer.remaining
        i = len(keys)
        while i:
            i -= 1
            key = -keys[i]
            if key > bound:
                break
            queue = levels[key]
            gone: list[BidEntry] | None = None
            for bid in queue:
                if (
                    bid.buyer_id == seller_id
                    or min_hours > bid.hours_or_max
                    or (bid.region is not None and bid.region != region)
                    or (
                        (minimum := bid.min_reliability_bp) is not None
                        and self._reliability.get(seller_id, UNRATED) < minimum
                    )
                ):
                    continue
                have = bid.remaining
                n = have if have < need else need
                need -= n
                taken += 1
                order_id = bid.order_id
                trade_id = f"{offer_id}:a{taken}"
                buyer_id = bid.buyer_id
                fills.append(
                    _new(
                        Fill,
                        (
                            trade_id,
                            order_id,
                            offer_id,
                            buyer_id,
                            seller_id,
                            gpu,
                            tier,
                            n,
                            bid.price_micros,
                            bid.currency,
                            billing,
                            bid.hours,
                            _SIDE_ASK,
                            t,
                            t,
                            provisioning_s,
                        ),
                    )
                )
                leases[trade_id] = (n, tier, buyer_id)
                level = bid.level
                level_gpus = depth[level] - n
                if level_gpus:
                    depth[level] = level_gpus
                else:
                    del depth[level]
                touched[level] = None
                filled = bid.filled = bid.filled + n
                if n < have:
                    left = bid.remaining = have - n
                    out.append(
                        _new(
                            OrderUpdate,
                            (order_id, _ORDER_PARTIALLY_FILLED, bid.gpus, filled, left, 0, None),
                        )
                    )
                    break
                bid.remaining = 0
                del orders[order_id]
                out.append(
                    _new(OrderUpdate, (order_id, _ORDER_FILLED, bid.gpus, filled, 0, 0, None))
                )
                if gone is None:
                    gone = [bid]
                else:
                    gone.append(bid)
                if not need:
                    break
            if gone is not None:
                if len(gone) == len(queue):
                    del levels[key]
                    del keys[i]
                else:
                    for bid in gone:
                        del queue[bid]
            if not need:
                break
        offer.taken = taken
        offer.sold += wanted - need
        offer.remaining = need

    def _fill_from_offers(
        self, bid: BidEntry, plan: list[tuple[OfferEntry, int]], book: GpuBook, t: int
    ) -> None:
        """Apply a taker bid's plan: one fill per offer leg, at the leg's price."""
        fills, out, depth, touched = self._fills, self._offer_out, self._depth, self._touched
        order_id, buyer_id, hours, taken = bid.order_id, bid.buyer_id, bid.hours, bid.taken
        total = 0
        for offer, n in plan:
            taken += 1
            total += n
            offer_id = offer.offer_id
            trade_id = f"{order_id}:b{taken}"
            extra = offer.extra
            fills.append(
                _new(
                    Fill,
                    (
                        trade_id,
                        order_id,
                        offer_id,
                        buyer_id,
                        offer.seller_id,
                        offer.gpu,
                        offer.tier,
                        n,
                        offer.price_micros,
                        offer.currency,
                        offer.billing,
                        hours,
                        _SIDE_BID,
                        t,
                        t,
                        0 if extra is None else extra.provisioning_s,
                    ),
                )
            )
            offer.leases[trade_id] = (n, offer.tier, buyer_id)
            left = offer.remaining = offer.remaining - n
            sold = offer.sold = offer.sold + n
            level = offer.level
            level_gpus = depth[level] - n
            if level_gpus:
                depth[level] = level_gpus
            else:
                del depth[level]
            touched[level] = None
            if not left:
                book.asks[offer.tier].remove(offer)
            if offer.twin is not None:
                self._twin_sold(offer)
                self._merge = True  # a plan may hold both legs of one pool
            status = _OFFER_LIVE if left else _OFFER_EXHAUSTED
            out.append(_new(OfferUpdate, (offer_id, status, offer.gpus, sold, left, None)))
        bid.taken = taken
        bid.filled += total
        bid.remaining -= total

    def _fill_from_bids(
        self, offer: OfferEntry, plan: list[tuple[BidEntry, int]], book: GpuBook, t: int
    ) -> None:
        """Apply a taker offer leg's plan: one fill per bid, at the bid's limit (the leg is
        not on the book meanwhile; a resting twin follows)."""
        fills, out, depth, touched = self._fills, self._order_out, self._depth, self._touched
        offer_id, seller_id, taken = offer.offer_id, offer.seller_id, offer.taken
        gpu, tier, billing, leases = offer.gpu, offer.tier, offer.billing, offer.leases
        provisioning_s = 0 if offer.extra is None else offer.extra.provisioning_s
        total = 0
        for bid, n in plan:
            taken += 1
            total += n
            order_id = bid.order_id
            trade_id = f"{offer_id}:a{taken}"
            fills.append(
                _new(
                    Fill,
                    (
                        trade_id,
                        order_id,
                        offer_id,
                        bid.buyer_id,
                        seller_id,
                        gpu,
                        tier,
                        n,
                        bid.price_micros,
                        bid.currency,
                        billing,
                        bid.hours,
                        _SIDE_ASK,
                        t,
                        t,
                        provisioning_s,
                    ),
                )
            )
            leases[trade_id] = (n, tier, bid.buyer_id)
            left = bid.remaining = bid.remaining - n
            filled = bid.filled = bid.filled + n
            level = bid.level
            level_gpus = depth[level] - n
            if level_gpus:
                depth[level] = level_gpus
            else:
                del depth[level]
            touched[level] = None
            if left:
                status = _ORDER_PARTIALLY_FILLED
            else:
                status = _ORDER_FILLED
                book.bids[bid.tier].remove(bid)
                del self._orders[order_id]
            out.append(_new(OrderUpdate, (order_id, status, bid.gpus, filled, left, 0, None)))
        offer.taken = taken
        offer.sold += total
        offer.remaining -= total
        if offer.twin is not None and total:
            self._twin_sold(offer)

    # Pools of two legs ----------------------------------------------------------------------

    def _twin_sold(self, leg: OfferEntry) -> None:
        """``leg`` sold some of its pool's GPUs: its twin shows the same counts, and a pool
        that sold interruptible GPUs may be preempted (``GpuBook.preemptable``)."""
        twin = leg.twin
        if twin is None:
            return
        self._mirror(leg, twin)
        if leg.tier == _INTERRUPTIBLE:
            self._books[leg.gpu].preemptable[twin] = None

    def _mirror(self, leg: OfferEntry, twin: OfferEntry) -> None:
        """Copy ``leg``'s pool counts to ``twin``; a resting twin's level follows the free
        GPUs, and the twin leaves the book when none is free."""
        twin.gpus, twin.sold, twin.taken = leg.gpus, leg.sold, leg.taken
        free = leg.remaining
        delta = free - twin.remaining
        if not delta:
            return
        side = self._books[twin.gpu].asks[twin.tier]
        if side.holds(twin):
            if not free:
                side.remove(twin)
            self._level(twin.level, delta)
        twin.remaining = free
