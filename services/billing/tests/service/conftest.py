"""Billing's handlers on the memory unit of work: a fresh ``desk`` (``billing_desk.Desk``) per
test."""

from __future__ import annotations

import pytest

from .billing_desk import Desk


@pytest.fixture
def desk() -> Desk:
    return Desk()
