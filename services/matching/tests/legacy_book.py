"""The book's snapshot as it was stored before capacity (format 1), for the tests that prove a
partition stored then still restores: offers counted what they had ``sold`` but knew no lease
by id, so the engine turns those GPUs into a pool's legacy leases.

Each offer is of 4 GPUs with 3 of them sold, priced in EUR and billed by the hour; the
snapshot's only rate is EUR at par.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def format_1_offer(
    offer_id: str,
    seller_id: str,
    gpu: str,
    tier: str,
    price_micros: int,
    *,
    seq: int = 1,
    taken: int = 0,
) -> dict[str, Any]:
    """One offer as a format 1 snapshot stored it: 4 GPUs, 3 sold, 1 remaining."""
    return {
        "offer_id": offer_id,
        "seller_id": seller_id,
        "gpu": gpu,
        "tier": tier,
        "price_micros": price_micros,
        "currency": "EUR",
        "gpus": 4,
        "sold": 3,
        "remaining": 1,
        "billing": "hour",
        "region": None,
        "min_hours": None,
        "available_until": None,
        "seq": seq,
        "taken": taken,
    }


def format_1_snapshot(
    seq: int, offers: Sequence[dict[str, Any]], orders: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """A format 1 snapshot body at command ``seq`` holding ``offers`` and ``orders``."""
    return {
        "format": 1,
        "seq": seq,
        "rates": {"EUR": 1_000_000},
        "offers": list(offers),
        "orders": list(orders),
    }
