"""Job time and cost: FLOPs model, hours, Decimal cost (None without a price) and ranking."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

# Realistic inputs: the GPUs and models the catalog service ships (its one copy of them).
from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_estimator import (
    JOB_CONSTANTS,
    Dataset,
    InvalidInputError,
    Method,
    Price,
    TrainingSettings,
    estimate_job,
    rank_gpus_for_job,
    training_flops,
)
from gpux_estimator.jobs import HOURS_QUANTUM, flops_per_token

pytestmark = pytest.mark.unit

DATA = Dataset(examples=20_000, avg_tokens=600, epochs=2)


def _model(model_id: str = "llama-3.1-8b") -> Any:
    return load_model_catalog().get(model_id)


def test_cost_is_none_without_a_price() -> None:
    job = estimate_job(
        _model(), TrainingSettings(method=Method.LORA), DATA, load_gpu_catalog().get("l40s")
    )
    assert job.cost is None
    assert job.currency is None
    assert job.hours > 0


@pytest.mark.parametrize("gpus", [1, 3, 8])
def test_cost_is_hours_times_gpus_times_price_exactly(gpus: int) -> None:
    price = Price(Decimal("2.88"), "USD")
    settings = TrainingSettings(method=Method.FULL, num_gpus=gpus)
    job = estimate_job(_model(), settings, DATA, load_gpu_catalog().get("h100-sxm"), price)
    assert isinstance(job.cost, Decimal)
    assert job.cost == job.hours * gpus * Decimal("2.88")
    assert job.gpu_hours == job.hours * gpus
    assert job.currency == "USD"
    assert job.hours == job.hours.quantize(HOURS_QUANTUM)


def test_full_costs_three_halves_of_lora_per_parameter() -> None:
    model = _model()
    full = flops_per_token(
        model, TrainingSettings(method=Method.FULL, gradient_checkpointing=False), 1
    )
    lora = flops_per_token(
        model, TrainingSettings(method=Method.LORA, gradient_checkpointing=False), 1
    )
    params = model.active_block_linear_params + model.vocab * model.hidden
    assert full - lora == pytest.approx(2 * params)
    assert full / lora == pytest.approx(1.5, rel=0.01)


def test_full_fine_tuning_is_six_n_per_token_plus_attention() -> None:
    model = _model()
    settings = TrainingSettings(method=Method.FULL, gradient_checkpointing=False, seq_len=4096)
    params = model.active_block_linear_params + model.vocab * model.hidden
    attention = 12 * model.layers * model.q_dim * 600
    assert training_flops(model, settings, DATA) == pytest.approx(
        DATA.tokens * (6 * params + attention)
    )


def test_mixture_of_experts_pays_only_for_active_experts() -> None:
    mixtral = _model("mixtral-8x7b")
    per_token = flops_per_token(
        mixtral, TrainingSettings(method=Method.FULL, gradient_checkpointing=False), 1
    )
    assert per_token / 6 / 1e9 == pytest.approx(12.9, rel=0.05)


def test_qlora_is_slower_than_lora_by_the_documented_factor() -> None:
    gpu = load_gpu_catalog().get("rtx-4090")
    lora = estimate_job(_model(), TrainingSettings(method=Method.LORA), DATA, gpu).hours
    qlora = estimate_job(_model(), TrainingSettings(method=Method.QLORA), DATA, gpu).hours
    assert float(qlora) == pytest.approx(float(lora) * JOB_CONSTANTS.qlora_slowdown, rel=1e-3)


def test_more_gpus_shorten_wall_time_but_not_gpu_hours() -> None:
    gpu = load_gpu_catalog().get("a100-sxm-80gb")
    one = estimate_job(_model(), TrainingSettings(method=Method.FULL, num_gpus=1), DATA, gpu)
    four = estimate_job(_model(), TrainingSettings(method=Method.FULL, num_gpus=4), DATA, gpu)
    assert float(four.hours) == pytest.approx(float(one.hours) / 4, rel=1e-3)
    assert float(four.gpu_hours) == pytest.approx(float(one.gpu_hours), rel=1e-3)


def test_ranking_keeps_only_fitting_gpus_cheapest_first_then_fastest() -> None:
    gpus = load_gpu_catalog()
    prices = {
        "rtx-4090": Price(Decimal("0.33"), "USD"),
        "h100-sxm": Price(Decimal("2.88"), "USD"),
        "l40s": Price(Decimal("0.79"), "USD"),
    }
    ranked = rank_gpus_for_job(_model(), TrainingSettings(method=Method.QLORA), DATA, gpus, prices)
    assert all(entry.headroom.fits for entry in ranked)
    priced = [entry for entry in ranked if entry.job.cost is not None]
    unpriced = [entry for entry in ranked if entry.job.cost is None]
    assert ranked[: len(priced)] == tuple(priced)
    assert [e.job.cost for e in priced] == sorted(e.job.cost for e in priced if e.job.cost)
    assert [e.job.hours for e in unpriced] == sorted(e.job.hours for e in unpriced)
    assert {e.gpu.id for e in priced} == set(prices)


def test_ranking_without_prices_is_by_hours_and_excludes_gpus_that_do_not_fit() -> None:
    ranked = rank_gpus_for_job(
        _model("llama-3.1-70b"), TrainingSettings(method=Method.QLORA), DATA, load_gpu_catalog()
    )
    ids = [entry.gpu.id for entry in ranked]
    assert "rtx-4090" not in ids
    assert {"h100-sxm", "h200", "b200"} <= set(ids)
    assert [e.job.hours for e in ranked] == sorted(e.job.hours for e in ranked)


def test_ranking_refuses_mixed_currencies() -> None:
    prices = {"l4": Price(Decimal("0.5"), "USD"), "l40s": Price(Decimal("0.7"), "EUR")}
    with pytest.raises(InvalidInputError, match="one currency"):
        rank_gpus_for_job(
            _model(), TrainingSettings(method=Method.QLORA), DATA, load_gpu_catalog(), prices
        )


@pytest.mark.parametrize(
    ("amount", "currency", "message"),
    [
        (0.33, "USD", "not a float"),
        (Decimal("NaN"), "USD", "finite"),
        (Decimal("-1"), "USD", "negative"),
        (Decimal("1"), "usd", "ISO 4217"),
        (Decimal("1"), "DOLLAR", "ISO 4217"),
    ],
)
def test_price_validation(amount: Any, currency: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        Price(amount, currency)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"examples": 0, "avg_tokens": 10}, "examples"),
        ({"examples": 10, "avg_tokens": 0}, "avg_tokens"),
        ({"examples": 10, "avg_tokens": 10, "epochs": 0}, "epochs"),
        ({"examples": 10, "avg_tokens": 10, "epochs": float("inf")}, "epochs"),
        ({"examples": True, "avg_tokens": 10}, "examples"),
    ],
)
def test_dataset_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        Dataset(**kwargs)
