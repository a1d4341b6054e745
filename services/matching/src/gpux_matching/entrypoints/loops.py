"""Matching's loops: the expiry tick of every partition held, and sellers' new reliability
rates logged in each of them as they arrive."""

from __future__ import annotations

import asyncio
import contextlib

from gpux_matching.service.partitions import Partitions


async def run_expiry(partitions: Partitions, interval_s: float) -> None:
    """Tick every ``interval_s`` until cancelled (rates to the latest, then expire what is
    due); then store final snapshots."""
    try:
        while True:
            await asyncio.sleep(interval_s)
            await partitions.tick()
    finally:
        with contextlib.suppress(Exception):
            await partitions.shutdown_snapshot()


async def run_reliability(partitions: Partitions) -> None:
    """Until cancelled: whenever sellers' rates changed, log them in every partition held
    (what arrives while one round runs goes into the next)."""
    while True:
        await partitions.next_reliability()
