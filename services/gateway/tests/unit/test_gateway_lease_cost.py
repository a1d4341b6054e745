from datetime import UTC, datetime, timedelta

from gpux_contracts.offers import BillingGranularity
from gpux_gateway.domain.leases import cost_so_far_micros

START = datetime(2026, 11, 29, 12, tzinfo=UTC)


def _cost(**overrides: object) -> int:
    values: dict[str, object] = {
        "billing": BillingGranularity.SECOND,
        "running": True,
        "price_micros_per_gpu_hour": 330_000,
        "gpus": 4,
        "started_at": START,
        "ends_at": None,
        "total_charged_micros": 0,
        "now": START + timedelta(seconds=90),
    }
    return cost_so_far_micros(**{**values, **overrides})  # type: ignore[arg-type]


def test_a_running_per_second_lease_accrues_by_the_whole_second() -> None:
    # 0.33 × 4 GPUs = 1.32 an hour; 90 s = 0.033, exactly.
    assert _cost() == 33_000
    # A fraction of a second is not billed yet.
    assert _cost(now=START + timedelta(seconds=90, milliseconds=999)) == 33_000
    assert _cost(now=START + timedelta(hours=1)) == 1_320_000


def test_accrual_rounds_half_to_even_in_micro_units() -> None:
    # 1 micro an hour × 1800 s = 0.5 micro → 0 (even); × 5400 s = 1.5 → 2.
    assert _cost(price_micros_per_gpu_hour=1, gpus=1, now=START + timedelta(seconds=1800)) == 0
    assert _cost(price_micros_per_gpu_hour=1, gpus=1, now=START + timedelta(seconds=5400)) == 2
    # 0.0001 an hour for 1 s: 100/3600 micro = 0.0277… → 0; for 18 s: 0.5 → 0; 54 s: 1.5 → 2.
    assert _cost(price_micros_per_gpu_hour=100, gpus=1, now=START + timedelta(seconds=18)) == 0
    assert _cost(price_micros_per_gpu_hour=100, gpus=1, now=START + timedelta(seconds=54)) == 2


def test_accrual_stops_at_a_fixed_lease_end_and_never_goes_below_the_charges() -> None:
    ends = START + timedelta(hours=2)
    assert _cost(ends_at=ends, now=START + timedelta(hours=5)) == 2_640_000
    assert _cost(now=START - timedelta(seconds=5)) == 0
    assert _cost(total_charged_micros=50_000) == 50_000


def test_hourly_and_ended_leases_cost_what_was_charged() -> None:
    assert _cost(billing=BillingGranularity.HOUR, total_charged_micros=1_320_000) == 1_320_000
    assert _cost(running=False, total_charged_micros=12_345) == 12_345
