"""Market data billing keeps: best asks (pricing.best-asks) and FX rates (fx.rates).

Best asks price the holds of market orders without a cap; rates convert between an order's
or lease's currency and its wallet's. Both keep the newest value per key: an older one
arriving late changes nothing (for rates, ``gpux_contracts.fx.supersedes``).
"""

from __future__ import annotations

from gpux_billing.domain.fx import to_reference
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.fx import RatePublished
from gpux_contracts.prices import BestAskChanged


async def on_best_ask(uow: BillingUnitOfWork, event: Envelope[BestAskChanged]) -> None:
    """Keep the market's best asks for market orders without a cap."""
    await uow.best_asks.record(event.payload)


async def on_rate(uow: BillingUnitOfWork, event: Envelope[RatePublished]) -> None:
    """Keep the latest rate of a currency into the reference currency (other pairs are not
    billing's)."""
    rate = to_reference(event.payload)
    if rate is not None:
        await uow.rates.record(rate)
