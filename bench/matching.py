"""Matching benchmark: gpux's engine core against the PyPI package ``lightmatchingengine``.

    uv run python bench/matching.py [--orders N] [--seed S] [--tick-micros T] [--spread-ticks K]
                                    [--no-gc]

One seeded stream of mixed operations on one GPU model (limit sells, limit buys, market buys,
cancels) runs through both engines in the same process, interleaved in blocks of 1,000
operations so that both see the same machine noise. Every call is timed with
``time.perf_counter_ns``. Prints each engine's orders/s (operations divided by the summed
call times) and p50/p99 latency per operation, the ratio, and a check that both engines
traded the same GPUs and left the same number of entries resting. Not a timed test: it only
reports. It stops by itself (at most 5,000,000 operations).

Mapping onto what lightmatchingengine supports (one instrument, price/qty/side, add/cancel):
a limit sell is a gpux offer (``add_offer``); a limit buy is a GTC limit order; a market buy is
a gpux market order, which never rests its remainder, while lightmatchingengine rests it at
price 0, so that remainder is cancelled inside the same timed call to reach the same state; a
cancel withdraws an offer or cancels an order. gpux has no market sells (sellers always name
a price), so the stream has none. Cancels only target entries still resting (checked outside
the timing; lightmatchingengine fails an assertion on some cancels of filled orders).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from dataclasses import dataclass, field

from lightmatchingengine.lightmatchingengine import LightMatchingEngine
from lightmatchingengine.lightmatchingengine import Side as LmeSide

from gpux_matching.domain import MatchingEngine

SELL, BUY, MARKET, CANCEL = 0, 1, 2, 3
GPU = "h100"
BLOCK = 1_000
PROGRESS_EVERY = 50_000
MAX_ORDERS = 5_000_000


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of the stream (``target`` is the index of the op a cancel refers to)."""

    kind: int
    ident: str
    price: int
    qty: int
    target: int


@dataclass(slots=True)
class Run:
    """One engine's measurements."""

    name: str
    latencies_ns: list[int] = field(default_factory=list)
    volume: int = 0
    resting: int = 0

    def orders_per_s(self) -> float:
        return len(self.latencies_ns) / (sum(self.latencies_ns) / 1e9)

    def percentile_us(self, q: float) -> float:
        ordered = sorted(self.latencies_ns)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def make_stream(n: int, seed: int, tick: int, spread: int) -> list[Op]:
    """A seeded stream: 40% limit sells, 35% limit buys, 5% market buys, 20% cancels.

    The mid price (2.00 per GPU-hour) wanders; sells ask up to ``spread`` ticks above it and
    buys bid up to ``spread`` ticks below it, each reaching a tenth of that across the mid,
    so roughly one limit order in ten crosses. Quantities are 1-8 GPUs; a cancel names one of
    the recent orders (exponentially weighted towards the newest).
    """
    rng = random.Random(seed)
    mid = 2_000_000
    overlap = max(1, spread // 10)
    ops: list[Op] = []
    adds: list[int] = []
    for i in range(n):
        if rng.random() < 0.02:
            mid = max(500_000, mid + tick * rng.choice((-5, 5)))
        r = rng.random()
        qty = rng.randint(1, 8)
        if r < 0.40:
            ops.append(Op(SELL, f"s{i}", mid + tick * rng.randint(-overlap, spread), qty, -1))
            adds.append(i)
        elif r < 0.75:
            ops.append(Op(BUY, f"b{i}", mid - tick * rng.randint(-overlap, spread), qty, -1))
            adds.append(i)
        elif r < 0.80 or not adds:
            ops.append(Op(MARKET, f"m{i}", 0, qty, -1))
        else:
            target = adds[max(0, len(adds) - 1 - int(rng.expovariate(1 / 300)))]
            ops.append(Op(CANCEL, f"c{i}", 0, 0, target))
    return ops


class GpuxDriver:
    """Feeds the stream to gpux's MatchingEngine."""

    def __init__(self) -> None:
        self.engine = MatchingEngine({"USD": 1_000_000})
        self.run = Run("gpux MatchingEngine")

    def block(self, ops: list[Op], start: int, end: int) -> None:
        engine, run = self.engine, self.run
        add_offer, place_order = engine.add_offer, engine.place_order
        withdraw_offer, cancel_order = engine.withdraw_offer, engine.cancel_order
        clock, latencies = time.perf_counter_ns, run.latencies_ns
        for i in range(start, end):
            op = ops[i]
            kind = op.kind
            if kind == CANCEL:
                target = ops[op.target]
                if target.kind == SELL:
                    # An exhausted offer stays in the engine's keeping (its GPUs may come
                    # back); the peer forgets a filled order, so only a live one is withdrawn.
                    offer = engine.offer(target.ident)
                    if offer is None or offer.status != "live":
                        continue
                    t0 = clock()
                    withdraw_offer(target.ident, now=i)
                    t1 = clock()
                else:
                    if engine.order(target.ident) is None:
                        continue
                    t0 = clock()
                    cancel_order(target.ident, now=i)
                    t1 = clock()
                latencies.append(t1 - t0)
                continue
            if kind == SELL:
                t0 = clock()
                result = add_offer(
                    op.ident, "seller", GPU, "on_demand", op.price, "USD", op.qty, now=i
                )
                t1 = clock()
            elif kind == BUY:
                t0 = clock()
                result = place_order(
                    op.ident, "buyer", GPU, op.qty, now=i, currency="USD",
                    price_micros=op.price, tier="on_demand",
                )  # fmt: skip
                t1 = clock()
            else:
                t0 = clock()
                result = place_order(
                    op.ident, "buyer", GPU, op.qty, now=i, currency="USD",
                    order_type="market", tier="on_demand",
                )  # fmt: skip
                t1 = clock()
            latencies.append(t1 - t0)
            run.volume += sum(fill.gpus for fill in result.fills)

    def finish(self) -> Run:
        orders, offers = self.engine.counts()
        self.run.resting = orders + offers
        return self.run


class LmeDriver:
    """Feeds the same stream to lightmatchingengine."""

    def __init__(self) -> None:
        self.lme = LightMatchingEngine()
        self.lme.add_order(GPU, 1, 1, LmeSide.SELL)  # create the book, then empty it again
        self.lme.cancel_order(1, GPU)
        self.live = self.lme.order_books[GPU].order_id_map
        self.ids: dict[int, int] = {}
        self.run = Run("lightmatchingengine")

    def block(self, ops: list[Op], start: int, end: int) -> None:
        run, ids, live = self.run, self.ids, self.live
        add_order, cancel = self.lme.add_order, self.lme.cancel_order
        clock, latencies = time.perf_counter_ns, run.latencies_ns
        for i in range(start, end):
            op = ops[i]
            kind = op.kind
            if kind == CANCEL:
                order = live.get(ids.get(op.target, -1))
                if order is None or order.leaves_qty <= 0:
                    continue
                t0 = clock()
                cancel(order.order_id, GPU)
                t1 = clock()
                latencies.append(t1 - t0)
                continue
            if kind == MARKET:
                t0 = clock()
                order, trades = add_order(GPU, 0, op.qty, LmeSide.BUY)
                if order.leaves_qty > 0:
                    cancel(order.order_id, GPU)
                t1 = clock()
            else:
                side = LmeSide.SELL if kind == SELL else LmeSide.BUY
                t0 = clock()
                order, trades = add_order(GPU, op.price, op.qty, side)
                t1 = clock()
                ids[i] = order.order_id
            latencies.append(t1 - t0)
            run.volume += sum(t.trade_qty for t in trades if t.order_id == order.order_id)

    def finish(self) -> Run:
        self.run.resting = sum(1 for order in self.live.values() if order.leaves_qty > 0)
        return self.run


def measure(ops: list[Op], *, no_gc: bool) -> tuple[Run, Run]:
    """Both engines over the stream, block by block, alternating which goes first."""
    ours, peer = GpuxDriver(), LmeDriver()
    gc.collect()
    if no_gc:
        gc.disable()
    for start in range(0, len(ops), BLOCK):
        end = min(len(ops), start + BLOCK)
        first, second = (ours, peer) if (start // BLOCK) % 2 == 0 else (peer, ours)
        first.block(ops, start, end)
        second.block(ops, start, end)
        if end % PROGRESS_EVERY == 0 or end == len(ops):
            print(f"  {end:,}/{len(ops):,} operations", file=sys.stderr, flush=True)
    gc.enable()
    return ours.finish(), peer.finish()


def report(ours: Run, peer: Run, args: argparse.Namespace) -> None:
    print(
        f"\nstream: {args.orders:,} operations, seed {args.seed}, tick {args.tick_micros} micros, "
        f"spread {args.spread_ticks} ticks, garbage collector {'off' if args.no_gc else 'on'}; "
        f"Python {sys.version.split()[0]}"
    )
    print(f"{'engine':<22}{'ops timed':>11}{'orders/s':>12}{'p50 µs':>9}{'p99 µs':>9}")
    for run in (ours, peer):
        print(
            f"{run.name:<22}{len(run.latencies_ns):>11,}{run.orders_per_s():>12,.0f}"
            f"{run.percentile_us(0.50):>9.2f}{run.percentile_us(0.99):>9.2f}"
        )
    ratio = ours.orders_per_s() / peer.orders_per_s()
    print(f"ratio (gpux / lightmatchingengine orders/s): {ratio:.2f}x")
    same = (ours.volume, ours.resting, len(ours.latencies_ns)) == (
        peer.volume,
        peer.resting,
        len(peer.latencies_ns),
    )
    print(
        f"check: traded GPUs {ours.volume:,} vs {peer.volume:,}, resting {ours.resting:,} vs "
        f"{peer.resting:,}: {'same' if same else 'DIFFERENT'}"
    )
    p99 = ours.percentile_us(0.99)
    print(
        f"targets: >= 2x orders/s: {'met' if ratio >= 2 else 'NOT met'}; "
        f"p99 < 10 µs: {'met' if p99 < 10 else 'NOT met'} ({p99:.2f} µs)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="gpux matching engine vs lightmatchingengine")
    parser.add_argument("--orders", type=int, default=200_000, help="operations in the stream")
    parser.add_argument("--seed", type=int, default=6, help="seed of the stream")
    parser.add_argument(
        "--tick-micros", type=int, default=100, help="price step (100 = 0.0001 per GPU-hour)"
    )
    parser.add_argument(
        "--spread-ticks", type=int, default=400, help="how far from the mid orders are priced"
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="disable Python's cyclic garbage collector while measuring (both engines)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.orders <= MAX_ORDERS:
        parser.error(f"--orders must be between 1 and {MAX_ORDERS:,}")
    if args.tick_micros < 1 or args.spread_ticks < 1:
        parser.error("--tick-micros and --spread-ticks must be positive")
    print(f"generating {args.orders:,} operations (seed {args.seed})...", file=sys.stderr)
    ops = make_stream(args.orders, args.seed, args.tick_micros, args.spread_ticks)
    ours, peer = measure(ops, no_gc=args.no_gc)
    report(ours, peer, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
