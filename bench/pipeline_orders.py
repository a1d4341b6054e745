"""Buyers' market orders: sequential latency, open loops at fixed rates, and backpressure.

Every order is one GPU for one hour, market, immediate-or-cancel, capped at 1.00 EUR, against
a liquidity seller's hourly EUR offers at 0.50 (enough GPUs are put on each book first), from
buyers funded by `dev` top-ups. "Filled" means the buyer's GET shows it: the client-side
latencies poll ``GET /v1/orders/{id}``; the filled rate of a whole phase comes from the
buyers' order lists afterwards (each order's ``updated_at``, the gateway's time of its final
status, against the end of the offered window).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from pipeline_http import SseEvent, sse
from pipeline_load import FINAL_ORDER, Job, encode, split
from pipeline_market import (
    MAX_OFFER_GPUS,
    Api,
    OfferWatch,
    epoch,
    fund,
    offer_body,
    order_body,
    push_bulk,
    sign_up,
    sign_up_many,
    wait_catalog,
)
from pipeline_phase import Bench, Measured, lag_summary, load_figures, measured
from pipeline_report import percentiles

LATENCY_GPU = "rtx-4090"
OPEN_GPUS = ("h100-sxm", "a100-sxm-80gb", "h200", "rtx-5090")
POLL_S = 0.002
SAMPLES_PER_S = 10


@dataclass
class StreamLog:
    """Best-ask events of one book as they arrived."""

    gpu: str
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, event: SseEvent) -> None:
        """Keep an event of this GPU's on-demand book."""
        quote = json.loads(event.data)
        if quote.get("gpu") == self.gpu and quote.get("tier") == "on_demand":
            self.events.append((event.received, quote))
            self.changed.set()

    def first(self, since: float, check: Any) -> float | None:
        """When the first event after ``since`` passing ``check`` arrived."""
        for received, quote in self.events:
            if received >= since and check(quote):
                return received
        return None

    async def wait(self, since: float, check: Any, timeout_s: float) -> float | None:
        """The first matching event's arrival, waiting up to ``timeout_s`` for it."""
        deadline = time.monotonic() + timeout_s
        while (seen := self.first(since, check)) is None and time.monotonic() < deadline:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
        return seen


async def follow_stream(url: str, log: StreamLog) -> None:
    """Read /v1/stream/prices into ``log`` until cancelled (reconnecting if it drops)."""
    last: str | None = None
    while True:
        try:
            headers = {"Last-Event-ID": last} if last else None
            async for event in sse(url, "/v1/stream/prices", headers):
                last = event.id or last
                if event.event == "best_ask":
                    log.add(event)
        except (OSError, ValueError):
            await asyncio.sleep(0.5)


async def _until_final(api: Api, key: str, order_id: str, timeout_s: float) -> tuple[str, float]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        order = await api.call("GET", f"/v1/orders/{order_id}", key=key)
        if order["status"] in FINAL_ORDER:
            return str(order["status"]), time.monotonic()
        await asyncio.sleep(POLL_S)
    return "not final", time.monotonic()


async def _latency_market(bench: Bench, count: int) -> str:
    api = bench.api
    await wait_catalog(api)
    seller = await sign_up(api, "bench latency seller", ["seller"])
    ids = await push_bulk(api, seller, [offer_body(LATENCY_GPU, MAX_OFFER_GPUS, "0.50")])
    if not await OfferWatch(seller, set(ids)).wait(api, 120):
        raise RuntimeError("the latency book's offer did not go live in 120 s")
    buyer = (await sign_up_many(api, "bench latency buyer", "buyer", 1))[0]
    await fund(api, [buyer], amount=f"{max(100, 2 * count)}.00")
    return buyer


async def latency_section(bench: Bench, count: int) -> dict[str, Any]:
    """``count`` sequential market orders: POST → 202, POST → filled by GET and by the stream."""
    api = bench.api
    buyer = await _latency_market(bench, count)
    log = StreamLog(LATENCY_GPU)
    reader = asyncio.create_task(follow_stream(api.url, log))
    await asyncio.sleep(0.5)
    posted, by_get, by_stream, outcomes = [], [], [], dict[str, int]()
    body = order_body(LATENCY_GPU)
    try:
        for index in range(count):
            started = time.monotonic()
            made = await api.call("POST", "/v1/orders", key=buyer, body=body)
            posted.append(time.monotonic() - started)
            status, seen = await _until_final(api, buyer, made["id"], 30)
            outcomes[status] = outcomes.get(status, 0) + 1
            by_get.append(seen - started)
            left = MAX_OFFER_GPUS - index - 1

            def taken(quote: dict[str, Any], left: int = left) -> bool:
                best = quote.get("best")
                return best is None or int(best["gpus"]) <= left

            streamed = await log.wait(started, taken, 5.0)
            if streamed is not None:
                by_stream.append(streamed - started)
    finally:
        reader.cancel()
    return {
        "orders": count,
        "outcomes": outcomes,
        "poll_interval_ms": POLL_S * 1000,
        "post_202": percentiles(posted),
        "post_to_filled_get": percentiles(by_get),
        "post_to_stream": percentiles(by_stream),
    }


async def drain(
    api: Api, keys: list[str], accepted: list[tuple[int, str]], timeout_s: float
) -> dict[str, tuple[str, float, float]]:
    """Each accepted order's final status, created_at and updated_at (epoch seconds), read
    from the buyers' lists until all are final or ``timeout_s`` passed."""
    wanted: dict[int, set[str]] = {}
    for key_index, order_id in accepted:
        wanted.setdefault(key_index, set()).add(order_id)
    final: dict[str, tuple[str, float, float]] = {}
    cursors: dict[int, str | None] = dict.fromkeys(wanted)
    deadline = time.monotonic() + timeout_s
    while len(final) < len(accepted) and time.monotonic() < deadline:
        for key_index, ids in wanted.items():
            if ids.issubset(final):
                continue
            items = await api.pages("/v1/orders", keys[key_index], cursors[key_index])
            prefix_final = True
            for item in items:
                if item["id"] in ids and item["status"] in FINAL_ORDER:
                    final[item["id"]] = (
                        item["status"],
                        epoch(item["created_at"]),
                        epoch(item["updated_at"]),
                    )
                prefix_final = prefix_final and item["id"] in final
                if prefix_final:
                    cursors[key_index] = item["id"]
        if len(final) < len(accepted):
            await asyncio.sleep(0.5)
    return final


def _fill_figures(
    final: dict[str, tuple[str, float, float]], accepted: int, phase: Measured
) -> dict[str, Any]:
    window_end = phase.start_epoch + phase.duration_s
    filled = [(c, u) for s, c, u in final.values() if s == "filled"]
    in_window = sum(1 for _, u in filled if u <= window_end)
    last = max((u for _, u in filled), default=phase.start_epoch)
    statuses: dict[str, int] = {}
    for status, _, _ in final.values():
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "final": len(final),
        "not_final": accepted - len(final),
        "final_statuses": statuses,
        "filled_in_window": in_window,
        "filled_per_s_in_window": round(in_window / phase.duration_s, 1),
        "filled_total": len(filled),
        "filled_per_s_to_last": round(len(filled) / max(1e-9, last - phase.start_epoch), 1),
        "last_fill_after_window_s": round(max(0.0, last - window_end), 1),
        "server_accept_to_filled": percentiles(u - c for c, u in filled),
    }


def _order_jobs(
    bench: Bench, keys: list[str], rate: float, count: int, *, follow_s: float
) -> list[Job]:
    calls = [("POST", "/v1/orders", encode(order_body(gpu))) for gpu in OPEN_GPUS]
    workers = bench.workers.count
    sample_every = max(1, round(rate / SAMPLES_PER_S))
    return [
        Job(
            url=bench.api.url,
            calls=list(calls),
            keys=keys,
            count=share,
            start_at=0.0,
            rate=rate / workers,
            follow="order",
            sample_every=sample_every,
            follow_timeout_s=follow_s,
            collect_ids=True,
        )
        for share in split(count, workers)
        if share
    ]


async def open_phase(
    bench: Bench, rate: float, duration_s: float, *, buyers: int, drain_s: float
) -> dict[str, Any]:
    """One open loop at ``rate`` orders/s for ``duration_s`` (after the lag of the earlier
    work settled, for up to ``drain_s``); drained for up to ``drain_s`` after."""
    assert bench.liquidity is not None
    api = bench.api
    count = max(1, round(rate * duration_s))
    keys = await sign_up_many(api, f"bench buyer {rate:g}/s", "buyer", buyers)
    await fund(api, keys)
    await bench.liquidity.ensure(api, list(OPEN_GPUS), count, timeout_s=300)
    settled = await bench.lag.settle(drain_s)
    jobs = _order_jobs(bench, keys, rate, count, follow_s=drain_s)
    phase = await measured(bench, jobs, duration_s, drain_s)
    accepted = phase.load.accepted  # key indexes into ``keys``: every worker has them all
    final = await drain(api, keys, accepted, drain_s)
    bench.liquidity.take(list(OPEN_GPUS), sum(1 for s, _, _ in final.values() if s == "filled"))
    after = await bench.lag.sample()
    return {
        "offered_per_s": rate,
        "duration_s": duration_s,
        "buyers": buyers,
        **load_figures(phase.load, duration_s),
        **_fill_figures(final, len(accepted), phase),
        "settled_before": settled,
        "lag": lag_summary(phase.lag, duration_s, count),
        "lag_after_drain": after,
        "cpu_pct": phase.cpu,
    }


def capacity(phases: list[dict[str, Any]]) -> float:
    """The best filled rate of the open-loop phases (orders/s, filled within the window)."""
    return max((float(p["filled_per_s_in_window"]) for p in phases), default=0.0)
