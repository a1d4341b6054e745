"""The whole chain in-process, shared by the flows that go through the public API only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING


@pytest.fixture(scope="module")
async def chain(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """Catalog, pricing, matching, billing (dev top-ups) and gateway; a client of the gateway."""
    async with (
        running(CATALOG, module_settings),
        running(PRICING, module_settings),
        running(MATCHING, module_settings, expiry_interval_s=0.2),
        running(BILLING, module_settings, dev_topups=True),
        running(GATEWAY, module_settings, anonymous_rate_limit="10000/minute") as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        yield client
