"""Readiness: each check bounded on its own, and only the stores a service needs decide."""

from __future__ import annotations

import asyncio

from gpux_platform.service import NEEDS, Store, check_within, ready_status


async def test_a_check_that_hangs_is_cut_at_its_timeout_and_named() -> None:
    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    async def fails() -> bool:
        raise ConnectionRefusedError

    async def silent() -> bool:
        return False

    async def answers() -> bool:
        return True

    probes = (hangs, fails, silent, answers)
    results = await asyncio.gather(*(check_within(p, 0.01) for p in probes))
    assert results == ["TimeoutError", "ConnectionRefusedError", "no answer", "ok"]


def test_only_the_stores_a_service_needs_make_it_unready() -> None:
    ok = {"kafka": "ok", "postgres": "ok", "redis": "ok"}
    assert {Store.KAFKA, Store.POSTGRES} == NEEDS
    assert ready_status(ok, NEEDS) == "ready"
    assert ready_status({**ok, "redis": "TimeoutError"}, NEEDS) == "degraded"
    assert ready_status({**ok, "redis": "TimeoutError"}, NEEDS | {Store.REDIS}) is None
    assert ready_status({**ok, "postgres": "OSError"}, NEEDS) is None
    assert ready_status({**ok, "kafka": "no answer"}, NEEDS) is None
    assert ready_status({"postgres": "ok"}, NEEDS) is None  # a needed store never checked
