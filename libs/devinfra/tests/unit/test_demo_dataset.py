"""The demo data set passes the gateway's schema and pricing's checks, and covers the market."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from gpux_catalog.adapters.files import load_gpu_catalog
from gpux_contracts.accounts import AccountStatus
from gpux_devinfra.demo.dataset import BUYER, SELLERS, demo_gpus, offer_spec
from gpux_gateway.offers.schemas import OfferIn
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.validation import OfferFacts, SellerView, check_offer
from gpux_pricing.service.fx import read_rates

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, tzinfo=UTC)
BODIES = [o.body(s.currency, s.region) for s in SELLERS for o in s.offers]


def test_every_offer_is_a_valid_request_body() -> None:
    for body in BODIES:
        OfferIn.model_validate(body)


def test_pricing_accepts_every_offer_at_the_default_rates_and_bands() -> None:
    settings = PricingSettings()
    to_eur = {r.base.value: r.rate for r in read_rates(settings.fx_file, datetime.now(UTC))} | {
        "EUR": Decimal(1)
    }
    seller = SellerView(AccountStatus.ACTIVE, is_seller=True)
    for body in BODIES:
        price = Decimal(body["price_per_gpu_hour"])
        facts = OfferFacts("s", body["gpu"], price, body["currency"], None)
        verdict = check_offer(
            facts,
            sellers={"s": seller},
            gpus={body["gpu"]: settings.band_for(body["gpu"])},
            reference_price=price * to_eur[body["currency"]],
            now=NOW,
        )
        assert verdict is None, (body, verdict)


def test_every_gpu_is_in_the_catalog() -> None:
    assert demo_gpus() <= {gpu.id for gpu in load_gpu_catalog().gpus}


def test_the_market_has_currencies_tiers_billing_and_several_gpus() -> None:
    assert {b["currency"] for b in BODIES} == {"EUR", "USD", "GBP"}
    assert {b["tier"] for b in BODIES} == {"on_demand", "interruptible"}
    assert {b["billing"] for b in BODIES} == {"hour", "second"}
    assert len(demo_gpus()) >= 5
    for tier in ("on_demand", "interruptible"):
        assert len({b["gpu"] for b in BODIES if b["tier"] == tier}) >= 4


def test_each_seller_offer_is_unique_so_a_rerun_can_recognise_it() -> None:
    specs = [offer_spec(b) for b in BODIES]
    assert len(specs) == len(set(specs))
    assert len({s.handle for s in SELLERS} | {BUYER.handle}) == len(SELLERS) + 1


def test_the_buyer_gets_credit_in_currencies_that_trade() -> None:
    assert BUYER.credit
    for currency, amount in BUYER.credit:
        assert currency in {"EUR", "USD", "GBP"}
        assert Decimal(amount) > 0
