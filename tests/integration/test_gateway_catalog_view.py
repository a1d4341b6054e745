"""The gateway's catalog view: rebuilt from the catalog service's published records alone,
ready once caught up (pure: the records are built in memory, as the catalog publishes them)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.exceptions import RequestValidationError

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_contracts.catalog import GpuPublished
from gpux_contracts.events import wrap
from gpux_gateway.catalog.schemas import DatasetIn, EstimateForModel, RecommendationQuery
from gpux_gateway.catalog.service import estimate, recommend, require_loaded
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_platform.broker import Outgoing, encode
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit

GPUS, MODELS = "t.catalog.gpus", "t.catalog.models"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def feed(view: CatalogView, topic: str, messages: list[Outgoing], start: int = 0) -> int:
    """Apply messages as consecutive records of partition 0; returns the next offset."""
    for offset, message in enumerate(messages, start=start):
        view.apply(topic, 0, offset, message.key.encode(), encode(message.envelope))
    return start + len(messages)


@pytest.fixture
def view() -> CatalogView:
    loaded = CatalogView(GPUS, MODELS)
    feed(loaded, GPUS, gpu_messages(load_gpu_catalog(), NOW))
    feed(loaded, MODELS, model_messages(load_model_catalog(), NOW))
    loaded.set_end_offsets({(GPUS, 0): 14, (MODELS, 0): 14})
    return loaded


def test_the_view_holds_the_domain_objects_it_was_published_from(view: CatalogView) -> None:
    gpus, models = load_gpu_catalog(), load_model_catalog()
    assert sorted(view.gpu_catalog.gpus, key=lambda g: g.id) == sorted(gpus, key=lambda g: g.id)
    assert set(view.model_catalog.models) == set(models)
    assert view.gpu_catalog.version == gpus.version
    assert view.ready
    assert view.rejected == 0


def test_gpus_are_listed_as_on_the_reference_page(view: CatalogView) -> None:
    names = [g.name for g in view.gpus()]
    page = ["RTX 4090", "RTX 5090", "RTX A6000", "L40S", "RTX 6000 Ada", "A100 SXM", "H100 SXM"]
    assert [n for n in names if n in page] == page
    memory = [g.memory_gb for g in view.gpus()]
    assert memory == sorted(memory)


def test_ready_only_once_read_up_to_the_end_offsets_of_start_up() -> None:
    fresh = CatalogView(GPUS, MODELS)
    assert not fresh.ready  # end offsets unknown yet
    fresh.set_end_offsets({(GPUS, 0): 14, (MODELS, 0): 0})
    assert not fresh.ready
    messages = gpu_messages(load_gpu_catalog(), NOW)
    feed(fresh, GPUS, messages[:13])
    assert not fresh.ready
    feed(fresh, GPUS, messages[13:], start=13)
    assert fresh.ready
    empty = CatalogView(GPUS, MODELS)
    empty.set_end_offsets({(GPUS, 0): 0, (MODELS, 0): 0})
    assert empty.ready
    assert empty.gpus() == []


def test_routes_answer_503_until_the_view_is_loaded() -> None:
    fresh = CatalogView(GPUS, MODELS)
    fresh.set_end_offsets({(GPUS, 0): 0, (MODELS, 0): 0})  # ready, but nothing published yet
    with pytest.raises(ProblemError) as unavailable:
        require_loaded(fresh)
    assert unavailable.value.status == 503
    assert unavailable.value.headers["Retry-After"]


def test_unreadable_records_are_skipped_and_the_old_value_kept(view: CatalogView) -> None:
    before = view.gpu("rtx-4090")
    view.apply(GPUS, 0, 14, b"rtx-4090", b"not json")
    other = gpu_messages(load_gpu_catalog(), NOW)[0]  # rtx-3090 under the wrong key
    view.apply(GPUS, 0, 15, b"rtx-4090", encode(other.envelope))
    view.apply(GPUS, 0, 16, None, encode(other.envelope))
    model = model_messages(load_model_catalog(), NOW)[0]  # a model on the GPU topic
    view.apply(GPUS, 0, 17, model.key.encode(), encode(model.envelope))
    assert view.rejected == 4
    assert view.gpu("rtx-4090") == before
    assert len(view.gpus()) == 14


def test_an_unknown_event_version_is_skipped(view: CatalogView) -> None:
    class GpuPublishedV9(GpuPublished):
        schema_version = 9

    payload = GpuPublishedV9(**view.gpu("rtx-4090").model_dump())  # type: ignore[union-attr]
    envelope = wrap(payload, producer="catalog", occurred_at=NOW)
    view.apply(GPUS, 0, 14, b"rtx-4090", encode(envelope))
    assert view.rejected == 1


def test_a_tombstone_removes_its_id(view: CatalogView) -> None:
    view.apply(GPUS, 0, 14, b"l4", None)
    assert view.gpu("l4") is None
    assert "l4" not in view.gpu_catalog.ids


def test_estimate_runs_the_catalog_domain_on_the_views_data(view: CatalogView) -> None:
    body = EstimateForModel(
        model="llama-3.1-8b",
        method="qlora",
        dataset=DatasetIn(examples=10_000, avg_tokens=1024, epochs=3),
    )
    answer = estimate(view, body, {})
    rtx = next(g for g in answer.gpus if g.gpu_id == "rtx-4090")
    assert rtx.fits
    assert rtx.job is not None
    assert rtx.job.hours > 0
    assert all((g.job is None) == (not g.fits) for g in answer.gpus)
    assert [g.headroom_gb for g in answer.gpus] == sorted(
        (g.headroom_gb for g in answer.gpus), reverse=True
    )


def test_unknown_models_and_domain_refusals_are_422(view: CatalogView) -> None:
    # Answered as validation errors (422 with errors[] naming the field), like any other.
    with pytest.raises(RequestValidationError) as unknown:
        estimate(view, EstimateForModel(model="gpt-17", method="lora"), {})
    assert [e["loc"][-1] for e in unknown.value.errors()] == ["model"]
    assert "unknown model id 'gpt-17'" in unknown.value.errors()[0]["msg"]
    with pytest.raises(RequestValidationError) as refused:
        recommend(view, RecommendationQuery(model="nope", method="qlora"), {}, "on_demand")
    assert [e["loc"][-1] for e in refused.value.errors()] == ["model"]


def test_recommendations_fit_and_are_ranked_by_hours(view: CatalogView) -> None:
    answer = recommend(
        view, RecommendationQuery(model="llama-3.1-70b", method="qlora"), {}, "on_demand"
    )
    assert answer.ranked_by == "hours"
    assert answer.items
    assert all(item.headroom_gb >= 0 for item in answer.items)
    assert [i.hours for i in answer.items] == sorted(i.hours for i in answer.items)
    assert "rtx-4090" not in {i.gpu_id for i in answer.items}  # 70B QLoRA needs ~50 GiB
