"""Market sessions through the memory unit of work: the latest state per scope wins."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpux_contracts.market import ALL_GPUS, MarketState

from .matching_desk import Desk

pytestmark = pytest.mark.unit


async def test_the_latest_state_of_a_scope_wins_and_an_older_one_is_ignored(desk: Desk) -> None:
    now = desk.clock.now()
    halted = desk.session("h100", MarketState.HALTED, now)
    older = desk.session("h100", MarketState.OPEN, now - timedelta(seconds=5))
    outcome = await desk.sessions(halted, older)
    assert (outcome.applied, outcome.units) == (2, 1)
    assert desk.uow.state.market["h100"][0] == "halted"
    assert await desk.uow.market.halted("h100")
    assert not await desk.uow.market.halted("a100")

    await desk.sessions(desk.session("h100", MarketState.OPEN, now + timedelta(seconds=1)))
    assert not await desk.uow.market.halted("h100")


async def test_halting_every_gpu_halts_each_one(desk: Desk) -> None:
    await desk.sessions(desk.session(ALL_GPUS, MarketState.HALTED))
    assert await desk.uow.market.halted("h100")
    assert await desk.uow.market.halted("a100")
    assert desk.uow.published == []  # sessions announce nothing of matching's own
