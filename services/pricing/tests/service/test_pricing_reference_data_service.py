"""What offers are checked against, on the memory unit of work: sellers, GPU models, FX rates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpux_contracts.accounts import AccountChanged, AccountStatus, Role
from gpux_contracts.catalog import GpuFit, GpuPublished
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import ACCOUNTS, CATALOG_GPUS, FX_RATES, Topic
from gpux_platform.batches import BatchHandler, Outcome
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.config import (
    BILLING_FX_MAX_AGE_S,
    DEFAULT_FX_FILE,
    ECB_DAILY_URL,
    PricingSettings,
)
from gpux_pricing.domain.validation import SellerView
from gpux_pricing.service import HANDLERS_BY_TOPIC
from gpux_pricing.service.fx import rate_messages, read_rates, stamped_on_read

from .conftest import START

pytestmark = pytest.mark.unit


async def apply(unit: MemoryPricingUnitOfWork, topic: Topic, *payloads: Payload) -> Outcome:
    events: list[Envelope[Any]] = [wrap(p, producer="peer", occurred_at=START) for p in payloads]
    return await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: unit).apply(events)


async def test_an_account_may_sell_while_it_is_an_active_seller(
    unit: MemoryPricingUnitOfWork,
) -> None:
    seller = AccountChanged(
        account_id="a1", name="farm", roles=(Role.SELLER,), status=AccountStatus.ACTIVE
    )
    suspended = seller.model_copy(update={"status": AccountStatus.SUSPENDED})
    buyer = AccountChanged(
        account_id="a2", name="lab", roles=(Role.BUYER,), status=AccountStatus.ACTIVE
    )
    await apply(unit, ACCOUNTS, seller, buyer)
    assert unit.state.sellers == {
        "a1": SellerView(AccountStatus.ACTIVE, True),
        "a2": SellerView(AccountStatus.ACTIVE, False),
    }
    await apply(unit, ACCOUNTS, suspended)
    assert unit.state.sellers["a1"] == SellerView(AccountStatus.SUSPENDED, True)


async def test_a_gpu_model_of_the_catalog_is_known(unit: MemoryPricingUnitOfWork) -> None:
    gpu = GpuPublished(
        id="h100-sxm",
        name="H100 SXM",
        vendor="NVIDIA",
        architecture="Hopper",
        memory_gb=80,
        memory_type="HBM3",
        bandwidth_gb_s=3350,
        bf16_tflops=989,
        fp16_tflops=989,
        fp8_tflops=1979,
        tdp_w=700,
        form_factor="SXM5",
        interconnect="NVLink 4",
        source="NVIDIA H100 datasheet",
        fit=GpuFit(
            qlora_b=70,
            lora16_b=30,
            full_b=7,
            inference_fp16_b=34,
            inference_int8_b=70,
            inference_int4_b=140,
        ),
        data_version=1,
    )
    await apply(unit, CATALOG_GPUS, gpu)
    assert unit.state.gpus["h100-sxm"] == "H100 SXM"


def rate(value: str, as_of: datetime) -> RatePublished:
    return RatePublished(
        base=Currency.USD, quote=Currency.EUR, rate=Decimal(value), as_of=as_of, source="test"
    )


async def test_the_newest_rate_wins_and_an_equal_time_replaces(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await apply(unit, FX_RATES, rate("0.95", START))
    await apply(unit, FX_RATES, rate("0.50", START - timedelta(days=1)))  # older: ignored
    assert unit.state.rates[Currency.USD].value == Decimal("0.95")
    await apply(unit, FX_RATES, rate("0.96", START))  # the same time again replaces it
    assert unit.state.rates[Currency.USD].value == Decimal("0.96")


async def test_a_rate_that_is_not_positive_is_set_aside(unit: MemoryPricingUnitOfWork) -> None:
    bad = RatePublished.model_construct(
        base=Currency.USD, quote=Currency.EUR, rate=Decimal(0), as_of=START, source="bad"
    )
    outcome = await apply(unit, FX_RATES, bad, rate("0.97", START + timedelta(hours=1)))
    assert (outcome.applied, outcome.set_aside) == (1, 1)
    assert unit.state.rates[Currency.USD].value == Decimal("0.97")


def test_the_fx_file_gives_each_rate_an_id_of_its_own_value_and_time() -> None:
    rates = read_rates(DEFAULT_FX_FILE, START)
    assert {r.base for r in rates} == {Currency.USD, Currency.GBP}
    assert all(r.quote is Currency.EUR for r in rates)
    first = rate_messages(rates, START)
    again = rate_messages(rates, START + timedelta(hours=1))
    assert [m.envelope.event_id for m in first] == [m.envelope.event_id for m in again]
    usd = next(m for m in first if m.key == "USD/EUR")
    usd_rate = next(r for r in rates if r.base is Currency.USD)
    assert usd.envelope.event_id == stable_id(
        "fx", "USD/EUR", usd_rate.as_of.isoformat(), format(usd_rate.rate, "f")
    )


def test_an_fx_file_without_an_offset_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rates.toml"
    path.write_text('as_of = 2026-11-01T00:00:00\n[rates]\nUSD = "0.9"\n')
    with pytest.raises(ValueError, match="offset"):
        read_rates(path, START)


def test_the_default_fx_file_is_stamped_when_read_so_it_never_goes_stale() -> None:
    assert stamped_on_read(DEFAULT_FX_FILE)
    later = START + timedelta(days=30)
    assert {r.as_of for r in read_rates(DEFAULT_FX_FILE, START)} == {START}
    assert {r.as_of for r in read_rates(DEFAULT_FX_FILE, later)} == {later}
    first, again = (
        rate_messages(read_rates(DEFAULT_FX_FILE, START), START),
        rate_messages(read_rates(DEFAULT_FX_FILE, later), later),
    )
    assert {m.envelope.event_id for m in first}.isdisjoint(m.envelope.event_id for m in again)


def test_a_snapshot_fx_file_keeps_its_own_time(tmp_path: Path) -> None:
    path = tmp_path / "rates.toml"
    path.write_text('as_of = 2026-11-01T00:00:00Z\n[rates]\nUSD = "0.9"\n')
    assert not stamped_on_read(path)
    (usd,) = read_rates(path, START + timedelta(days=30))
    assert usd.as_of == datetime(2026, 11, 1, tzinfo=UTC)


def test_production_refuses_the_development_fx_file(tmp_path: Path) -> None:
    prod = {"env": "prod", "database_url": "postgresql://u:p@db/gpux"}
    with pytest.raises(ValueError, match="as_of"):
        PricingSettings.model_validate(prod)
    path = tmp_path / "rates.toml"
    path.write_text('as_of = 2026-11-01T00:00:00Z\n[rates]\nUSD = "0.9"\n')
    assert PricingSettings.model_validate(prod | {"fx_file": str(path)}).fx_file == path


def test_production_accepts_the_ecb_source_over_https_only() -> None:
    prod = {"env": "prod", "database_url": "postgresql://u:p@db/gpux", "fx_source": "ecb"}
    settings = PricingSettings.model_validate(prod)
    assert str(settings.fx_ecb_url) == ECB_DAILY_URL
    with pytest.raises(ValueError, match="https"):
        PricingSettings.model_validate(prod | {"fx_ecb_url": "http://www.ecb.europa.eu/x.xml"})


def test_a_rate_is_warned_days_before_billing_refuses_it() -> None:
    warn_after = timedelta(seconds=PricingSettings().fx_warn_after_s)
    # Past a weekend's ECB gap (Friday 14:15 CET to Monday 16:00: about 3 days 2 hours) ...
    assert warn_after > timedelta(days=3, hours=2)
    # ... and two days or more before billing's limit (GPUX_FX_MAX_AGE_S, 7 days).
    assert timedelta(seconds=BILLING_FX_MAX_AGE_S) - warn_after >= timedelta(days=2)
    with pytest.raises(ValueError, match="less than"):
        PricingSettings(fx_warn_after_s=BILLING_FX_MAX_AGE_S)
