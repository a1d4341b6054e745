"""What the gateway's endpoints share: settings, clock, units of work, Redis reads, views."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from gpux_gateway.adapters.access_cipher import AesGcmAccessCipher
from gpux_gateway.adapters.redis.ratelimit import RateLimiter
from gpux_gateway.config import GatewaySettings
from gpux_gateway.entrypoints.backpressure import WriteGate
from gpux_gateway.market.repository import MarketDataRepository
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_gateway.readmodels.market import MarketView
from gpux_gateway.readmodels.orderbook import BookView
from gpux_gateway.readmodels.principals import PrincipalCache
from gpux_gateway.service.unit_of_work import UnitOfWorkFactory
from gpux_gateway.wallets.repository import BalancesRepository
from gpux_platform.clock import Clock


@dataclass(frozen=True)
class Views:
    """The views the gateway keeps in memory from compacted topics (and the key cache they keep
    fresh)."""

    catalog: CatalogView
    sessions: MarketView
    books: BookView
    principals: PrincipalCache
    """Who recently used keys stand for (read from PostgreSQL, dropped on change)."""


@dataclass(frozen=True)
class Gateway:
    """The gateway's dependencies, kept on the app (``app.state.gateway``) for the endpoints."""

    settings: GatewaySettings
    clock: Clock
    unit_of_work: UnitOfWorkFactory
    limiter: RateLimiter
    market_data: MarketDataRepository
    balances: BalancesRepository
    views: Views
    writes: WriteGate
    """The door for writes of orders and offers (refused beyond capacity)."""

    @property
    def pepper(self) -> bytes:
        """The server secret of key digests."""
        return self.settings.key_pepper.get_secret_value().encode()

    @cached_property
    def access_cipher(self) -> AesGcmAccessCipher:
        """Seals and opens lease access details under ``GPUX_ACCESS_KEYS``."""
        return AesGcmAccessCipher.from_setting(self.settings.access_keys.get_secret_value())

    @property
    def idempotency_ttl(self) -> timedelta:
        """How long creating responses are kept for replays."""
        return timedelta(hours=self.settings.idempotency_ttl_h)
