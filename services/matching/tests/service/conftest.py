"""The service tests' fixture: a recovered partition on the memory store (``matching_desk``)."""

from __future__ import annotations

import pytest

from .matching_desk import Desk


@pytest.fixture
async def desk() -> Desk:
    desk = Desk()
    await desk.partition.recover()
    return desk
