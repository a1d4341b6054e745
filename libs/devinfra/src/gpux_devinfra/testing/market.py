"""The market's answers and streams as the gateway sends them, for the CLI's market tests.

The shapes are those docs/API.md documents and the SDK's models read (a field they require
and a shape lacks fails the command under test); the streams are ``text/event-stream``
bodies as the gateway writes them (``retry:``, pings, ``event:``/``id:``/``data:`` blocks).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import httpx

STAMP = "2025-01-01T00:00:00Z"
UNCOUNTED = {"ready_in_time": 0, "failed": 0, "reclaimed": 0, "rate": None}
"""A seller reliability record before anything was counted."""

OFFER: dict[str, Any] = {
    "id": "01OFFER",
    "gpu": "rtx-4090",
    "gpus": 8,
    "capacity_gpus": 8,
    "leased_gpus": 0,
    "remaining_gpus": 8,
    "price_per_gpu_hour": "0.40",
    "interruptible_price_per_gpu_hour": None,
    "interruption_notice_seconds": 120,
    "provisioning_timeout_seconds": 600,
    "currency": "USD",
    "tier": "on_demand",
    "billing": "hour",
    "region": None,
    "min_hours": None,
    "available_until": None,
    "status": "pending",
    "reason": None,
    "reliability": {"offer": UNCOUNTED, "seller": UNCOUNTED},
    "created_at": STAMP,
    "updated_at": STAMP,
}
"""A seller's offer just pushed."""

ORDER: dict[str, Any] = {
    "id": "01ORDER",
    "gpu": "rtx-4090",
    "gpus": 2,
    "filled_gpus": 0,
    "remaining_gpus": 2,
    "type": "limit",
    "max_price_per_gpu_hour": "0.45",
    "currency": "USD",
    "tier": "any",
    "region": None,
    "hours": 3,
    "time_in_force": "gtc",
    "expires_at": None,
    "status": "pending_funds",
    "reason": None,
    "shortfall": None,
    "shortfall_currency": None,
    "rebuy_on_interruption": False,
    "rebuy_of": None,
    "ssh_key_ids": [],
    "min_reliability": None,
    "created_at": STAMP,
    "updated_at": STAMP,
}
"""A buyer's order just placed (billing has not held its funds yet)."""


def fill(trade_id: str, gpus: int, price: str = "0.40") -> dict[str, Any]:
    """One fill of ``ORDER`` as GET /v1/orders/{id} shows it."""
    return {
        "trade_id": trade_id,
        "offer_id": "01OFFER",
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": "USD",
        "tier": "on_demand",
        "billing": "hour",
        "hours": 3,
        "executed_at": STAMP,
        "starts_at": None,
    }


def order_detail(status: str, fills: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
    """``ORDER`` as GET /v1/orders/{id} answers it once in ``status`` with ``fills``."""
    filled = sum(f["gpus"] for f in fills)
    open_gpus = 0 if status in {"filled", "cancelled", "expired", "rejected"} else 2 - filled
    return {
        **ORDER,
        "status": status,
        "filled_gpus": filled,
        "remaining_gpus": open_gpus,
        "fills": fills,
        **changes,
    }


def account_event(kind: str, seq: int, data: dict[str, Any]) -> tuple[str, str, str]:
    """An account event as the stream sends it: its type, cursor and JSON."""
    cursor = f"1000.{seq}"
    body = {
        "id": cursor,
        "type": kind,
        "created_at": STAMP,
        "account_id": "01BUYER",
        "data": data,
    }
    return kind, cursor, json.dumps(body)


def order_updated(seq: int, status: str, filled: int, **changes: Any) -> tuple[str, str, str]:
    """``order.updated`` of ``ORDER``: its new status and GPUs filled."""
    data = {
        "order_id": ORDER["id"],
        "buyer_id": "01BUYER",
        "gpu": ORDER["gpu"],
        "status": status,
        "filled_gpus": filled,
        "remaining_gpus": 2 - filled,
        "reason": None,
        "shortfall": None,
        "shortfall_currency": None,
        **changes,
    }
    return account_event("order.updated", seq, data)


def order_filled(seq: int, trade_id: str, gpus: int) -> tuple[str, str, str]:
    """``order.filled`` of ``ORDER``: one fill from ``OFFER`` at 0.40 USD."""
    data = {
        "trade_id": trade_id,
        "order_id": ORDER["id"],
        "offer_id": "01OFFER",
        "gpus": gpus,
        "price_per_gpu_hour": "0.40",
        "currency": "USD",
    }
    return account_event("order.filled", seq, data)


def sse_body(events: Iterable[tuple[str, str, str]], *, retry_ms: int = 0) -> bytes:
    """A stream's body: ``retry:``, a ping, then each ``(event, id, data)`` block."""
    blocks = [f": stream\nretry: {retry_ms}\n\n", ": ping\n\n"]
    blocks += [f"event: {kind}\nid: {cursor}\ndata: {data}\n\n" for kind, cursor, data in events]
    return "".join(blocks).encode()


def sse_response(events: Iterable[tuple[str, str, str]], *, retry_ms: int = 0) -> httpx.Response:
    """A 200 ``text/event-stream`` answer carrying ``events``, then the end of the stream."""
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=sse_body(events, retry_ms=retry_ms),
    )
