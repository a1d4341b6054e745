"""A seller's offers: many in bulk until all are live and the best ask is right, then
sustained re-pricing with the best ask and the seller's own view following.

One seller pushes ``offers`` hourly EUR offers for one GPU model (a book nobody else uses)
in bulk requests of 500, at distinct prices 1.0000, 1.0001, ... in a shuffled order, and
watches its own list (GET /v1/offers) until each is live and GET /v1/prices shows the
cheapest as the best ask. Then an open loop re-prices the other offers at random between
1.0000 and 1.9999 (PATCH, ``rate``/s), a sample of them followed in GET /v1/offers/{id}, while
once a second a probe moves the cheapest offer below everything else (0.9000, 0.8990, ...)
and times how long until the best ask (GET /v1/prices), the price stream and the seller's
own view show it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pipeline_load import Call, Job, encode, split
from pipeline_market import Api, OfferWatch, best_ask, offer_body, push_bulk, sign_up
from pipeline_orders import StreamLog, follow_stream
from pipeline_phase import START_DELAY_S, Bench, lag_summary, load_figures, measured
from pipeline_report import percentiles

SELLER_GPU = "l40s"
PROBE_EVERY_S = 1.0
PROBE_TIMEOUT_S = 10.0


async def _until(check: Any, timeout_s: float, every_s: float = 0.01) -> float | None:
    """When ``await check()`` first came true (monotonic), None if not within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await check():
            return time.monotonic()
        await asyncio.sleep(every_s)
    return None


def _best_is(offer_id: str, price: Decimal) -> Callable[[dict[str, Any]], bool]:
    """The probe's offer at ``price`` or below (a later probe moved it lower still)."""

    def check(quote: dict[str, Any]) -> bool:
        best = quote.get("best")
        if not isinstance(best, dict):
            return False
        return best["offer_id"] == offer_id and Decimal(best["price"]) <= price

    return check


async def _best_shows(api: Api, offer_id: str, price: Decimal, *, exact: bool = False) -> bool:
    best = await best_ask(api, SELLER_GPU)
    if best is None or best["offer_id"] != offer_id:
        return False
    shown = Decimal(best["offered_price"])
    return shown == price if exact else shown <= price


async def _bulk_live(
    bench: Bench, seller: str, count: int, live_timeout_s: float
) -> tuple[dict[str, Any], list[str], str]:
    api = bench.api
    rng = random.Random(13)
    prices = [f"{1 + i / 10_000:.4f}" for i in range(count)]
    rng.shuffle(prices)
    started = time.monotonic()
    ids = await push_bulk(api, seller, [offer_body(SELLER_GPU, 8, p) for p in prices])
    accepted_s = time.monotonic() - started
    cheapest = ids[prices.index("1.0000")]
    watch = OfferWatch(seller, set(ids))
    best_right = asyncio.create_task(
        _until(lambda: _best_shows(api, cheapest, Decimal(1), exact=True), live_timeout_s, 0.2)
    )
    all_live = await watch.wait(api, live_timeout_s)
    best_at = await best_right
    live_s = sorted(at - started for at in watch.live_at.values())
    figures = {
        "offers": count,
        "bulk_requests_202_s": round(accepted_s, 2),
        "live": len(watch.live_at),
        "refused": len(watch.refused),
        "all_live": all_live,
        "all_live_s": round(live_s[-1], 2) if all_live and live_s else None,
        "live_per_s": round(len(live_s) / live_s[-1], 1) if live_s else None,
        "post_to_live": percentiles(live_s),
        "best_ask_right_s": None if best_at is None else round(best_at - started, 2),
    }
    return figures, [i for i in ids if i in watch.live_at and i != cheapest], cheapest


async def _probe(
    api: Api, seller: str, offer_id: str, price: Decimal, log: StreamLog
) -> tuple[float | None, ...]:
    started = time.monotonic()
    await api.call(
        "PATCH", f"/v1/offers/{offer_id}", key=seller, body={"price_per_gpu_hour": str(price)}
    )

    async def own() -> bool:
        offer = await api.call("GET", f"/v1/offers/{offer_id}", key=seller)
        return Decimal(offer["price_per_gpu_hour"]) <= price

    seen = await asyncio.gather(
        _until(lambda: _best_shows(api, offer_id, price), PROBE_TIMEOUT_S),
        log.wait(started, _best_is(offer_id, price), PROBE_TIMEOUT_S),
        _until(own, PROBE_TIMEOUT_S),
    )
    return tuple(None if at is None else at - started for at in seen)


async def _probes(
    api: Api, seller: str, offer_id: str, log: StreamLog, duration_s: float
) -> list[tuple[float | None, ...]]:
    """A probe every second (each followed for up to 10 s, side by side); prices only go
    down, so a probe counts as shown once its price or a later, lower one is."""
    await asyncio.sleep(START_DELAY_S)
    probes: list[asyncio.Task[tuple[float | None, ...]]] = []
    stop = time.monotonic() + duration_s
    marker = Decimal("0.9000")
    try:
        while time.monotonic() < stop:
            next_at = time.monotonic() + PROBE_EVERY_S
            probes.append(asyncio.create_task(_probe(api, seller, offer_id, marker, log)))
            marker -= Decimal("0.0010")
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        return list(await asyncio.gather(*probes))
    finally:
        for probe in probes:
            probe.cancel()


def _reprice_jobs(
    bench: Bench, seller: str, offers: list[str], rate: float, duration_s: float
) -> list[Job]:
    rng = random.Random(17)
    count = max(1, round(rate * duration_s))
    calls: list[Call] = [
        (
            "PATCH",
            f"/v1/offers/{offers[i % len(offers)]}",
            encode({"price_per_gpu_hour": f"{1 + rng.randrange(10_000) / 10_000:.4f}"}),
        )
        for i in range(count)
    ]
    workers = bench.workers.count
    # An offer comes round again after len(offers)/rate s: follow a change only until then.
    follow_s = max(0.5, min(10.0, 0.8 * len(offers) / rate))
    return [
        Job(
            url=bench.api.url,
            calls=calls[w::workers],
            keys=[seller],
            count=share,
            start_at=0.0,
            rate=rate / workers,
            follow="offer_price",
            sample_every=max(1, round(rate / 10)),
            follow_timeout_s=follow_s,
        )
        for w, share in enumerate(split(count, workers))
        if share
    ]


async def sellers_section(
    bench: Bench, *, offers: int, rate: float, duration_s: float, live_timeout_s: float
) -> dict[str, Any]:
    """Bulk offers until live, then re-pricing at ``rate``/s for ``duration_s``."""
    api = bench.api
    seller = await sign_up(api, "bench bulk seller", ["seller"])
    log = StreamLog(SELLER_GPU)
    reader = asyncio.create_task(follow_stream(api.url, log))
    try:
        bulk, others, cheapest = await _bulk_live(bench, seller, offers, live_timeout_s)
        if not others:
            return {"bulk": bulk, "reprice": None}
        probing = asyncio.create_task(_probes(api, seller, cheapest, log, duration_s))
        jobs = _reprice_jobs(bench, seller, others, rate, duration_s)
        phase = await measured(bench, jobs, duration_s, 15)
        probes = await probing
    finally:
        reader.cancel()
    column = list(zip(*probes, strict=True)) if probes else [(), (), ()]
    missed = [sum(1 for v in c if v is None) for c in column]
    return {
        "bulk": bulk,
        "reprice": {
            "target_per_s": rate,
            "duration_s": duration_s,
            **load_figures(phase.load, duration_s),
            "probes": len(probes),
            "probe_best_ask_get": percentiles(v for v in column[0] if v is not None),
            "probe_best_ask_stream": percentiles(v for v in column[1] if v is not None),
            "probe_own_view": percentiles(v for v in column[2] if v is not None),
            "probes_not_seen": dict(zip(("get", "stream", "own"), missed, strict=True)),
            "lag": lag_summary(phase.lag, duration_s, sum(j.count for j in jobs)),
            "cpu_pct": phase.cpu,
        },
    }
