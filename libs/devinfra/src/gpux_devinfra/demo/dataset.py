"""The demo data set: three sellers pricing in EUR, USD and GBP, and one funded buyer.

Some offers are one pool sold in both tiers (an on-demand and an interruptible price), some
only on demand, some only interruptible (the single-tier form).

Prices sit near what GPU clouds asked in 2025, so the best-ask table looks like a market; every
offer is a catalog GPU id with a price of at most 4 decimals, well inside pricing's default
sanity band (0.01–100 EUR per GPU-hour).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpux_contracts.offers import BillingGranularity, Tier

ON_DEMAND = Tier.ON_DEMAND
SPOT = Tier.INTERRUPTIBLE
HOUR = BillingGranularity.HOUR
SECOND = BillingGranularity.SECOND


@dataclass(frozen=True)
class DemoOffer:
    """One offer a demo seller pushes."""

    gpu: str
    gpus: int
    price: str
    tier: Tier
    billing: BillingGranularity
    interruptible_price: str | None = None
    """An on-demand offer's interruptible price: the same GPUs sold in both tiers."""

    def tiers(self) -> tuple[str, ...]:
        """The tiers whose books show the offer: its own, and interruptible too with a second
        price."""
        if self.interruptible_price is None:
            return (self.tier.value,)
        return (self.tier.value, SPOT.value)

    def body(self, currency: str, region: str) -> dict[str, Any]:
        """The POST /v1/offers body."""
        body: dict[str, Any] = {
            "gpu": self.gpu,
            "gpus": self.gpus,
            "price_per_gpu_hour": self.price,
            "currency": currency,
            "tier": self.tier.value,
            "billing": self.billing.value,
            "region": region,
            "provisioning_timeout_seconds": 0,  # the demo's machines are ready at the start
        }
        if self.interruptible_price is not None:
            body["interruptible_price_per_gpu_hour"] = self.interruptible_price
        return body


@dataclass(frozen=True)
class DemoSeller:
    """A demo seller: one currency, one region, a handful of offers."""

    handle: str
    name: str
    currency: str
    region: str
    offers: tuple[DemoOffer, ...]


@dataclass(frozen=True)
class DemoBuyer:
    """The demo buyer and the credit it gets once (a `dev` top-up per currency)."""

    handle: str
    name: str
    credit: tuple[tuple[str, str], ...]


SELLERS: tuple[DemoSeller, ...] = (
    DemoSeller(
        "nordic",
        "Nordic GPU Farm (demo)",
        "EUR",
        "eu-north",
        (
            DemoOffer("rtx-4090", 16, "0.39", ON_DEMAND, HOUR, "0.24"),
            DemoOffer("a100-sxm-80gb", 8, "1.35", ON_DEMAND, HOUR),
            DemoOffer("h100-sxm", 8, "1.65", SPOT, HOUR),
            DemoOffer("l40s", 8, "0.79", ON_DEMAND, SECOND),
        ),
    ),
    DemoSeller(
        "lonestar",
        "Lone Star Compute (demo)",
        "USD",
        "us-south",
        (
            DemoOffer("h100-sxm", 16, "2.49", ON_DEMAND, SECOND, "1.49"),
            DemoOffer("a100-sxm-80gb", 8, "0.99", SPOT, SECOND),
            DemoOffer("rtx-4090", 8, "0.44", ON_DEMAND, SECOND),
            DemoOffer("h200", 8, "3.29", ON_DEMAND, HOUR),
            DemoOffer("l40s", 8, "0.52", SPOT, HOUR),
        ),
    ),
    DemoSeller(
        "thames",
        "Thames Cloud (demo)",
        "GBP",
        "uk-south",
        (
            DemoOffer("h100-sxm", 8, "1.99", ON_DEMAND, HOUR),
            DemoOffer("rtx-5090", 8, "0.55", ON_DEMAND, HOUR, "0.36"),
            DemoOffer("h200", 8, "2.05", SPOT, SECOND),
            DemoOffer("l40s", 4, "0.65", ON_DEMAND, HOUR),
        ),
    ),
)

BUYER = DemoBuyer("buyer", "Demo Buyer", (("EUR", "500.00"), ("USD", "500.00")))


def offer_spec(body: dict[str, Any]) -> tuple[str, ...]:
    """What makes a demo offer the same one again: GPU, tier, billing, currency, region."""
    return tuple(str(body.get(k)) for k in ("gpu", "tier", "billing", "currency", "region"))


def demo_gpus() -> set[str]:
    """Every GPU id the data set offers."""
    return {offer.gpu for seller in SELLERS for offer in seller.offers}
