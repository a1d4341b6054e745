"""The whole chain in-process, shared by the flows that go through the public API only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.services import stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING


@pytest.fixture(scope="module")
async def chain(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """Catalog, pricing, matching, billing (dev top-ups) and gateway; a client of the gateway."""
    async with (
        stack(module_settings, CATALOG, PRICING, MATCHING, BILLING, GATEWAY) as served,
        served["gateway"].client() as client,
    ):
        yield client
