"""The provisioning timeouts an offer may state (``domain.offers``): 0 or the bounds."""

from __future__ import annotations

import pytest

from gpux_gateway.domain.offers import provisioning_timeout_problem

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seconds", [0, 60, 600, 86_400])
def test_zero_and_timeouts_within_the_bounds_may_be_stated(seconds: int) -> None:
    assert provisioning_timeout_problem(seconds) is None


@pytest.mark.parametrize("seconds", [-1, 1, 59, 86_401])
def test_anything_else_is_refused_with_the_bounds(seconds: int) -> None:
    assert provisioning_timeout_problem(seconds) == (
        "must be 0 (ready at the start) or 60 to 86400 seconds"
    )
