"""`gpux gpus` and `gpux fit`: tables and errors, against a fake transport.

The fake answers with what the gateway's own code computes from the catalog's published
records, so these presentation tests cannot drift from the real response shapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, TypeAdapter

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_devinfra.catalog_tables import price_cell
from gpux_devinfra.testing.cli import FakeGateway, run, use_transport
from gpux_estimator import Price
from gpux_gateway.catalog.schemas import EstimateIn, GpuList, GpuOut, RecommendationQuery
from gpux_gateway.catalog.service import estimate, recommend
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_platform.broker import encode
from gpux_platform.problems import ProblemError
from gpux_sdk.models.gpu_out_best_ask import GpuOutBestAsk
from gpux_sdk.types import UNSET

pytestmark = pytest.mark.unit

NOW = datetime(2025, 1, 1, tzinfo=UTC)
ESTIMATE_IN: TypeAdapter[EstimateIn] = TypeAdapter(EstimateIn)
LIVE = {
    "rtx-4090": Price(Decimal("0.40"), "USD"),
    "h100-sxm": Price(Decimal("2.467391"), "USD"),
}
"""Best asks of two GPU models; the others have no offer."""


def _view() -> CatalogView:
    view = CatalogView("gpus", "models")
    for topic, messages in (
        ("gpus", gpu_messages(load_gpu_catalog(), NOW)),
        ("models", model_messages(load_model_catalog(), NOW)),
    ):
        for offset, message in enumerate(messages):
            view.apply(topic, 0, offset, message.key.encode(), encode(message.envelope))
    return view


class CatalogGateway:
    """Answers /v1/gpus and /v1/estimates like the gateway, from the catalog's records."""

    def __init__(self) -> None:
        self.view = _view()

    def gpus(self, _: httpx.Request) -> httpx.Response:
        items = [GpuOut.model_validate(g.model_dump()) for g in self.view.gpus()]
        return httpx.Response(200, json=GpuList(items=items).model_dump(mode="json"))

    def estimate(self, request: httpx.Request) -> httpx.Response:
        return _answered(
            lambda: estimate(self.view, ESTIMATE_IN.validate_json(request.content), {})
        )

    def recommendations(self, request: httpx.Request) -> httpx.Response:
        def answer() -> BaseModel:
            query = RecommendationQuery.model_validate(dict(request.url.params))
            return recommend(self.view, query, LIVE, query.tier)

        return _answered(answer)


def _answered(compute: Callable[[], BaseModel]) -> httpx.Response:
    """``compute``'s answer, or the problem the gateway's handlers would make of its error."""
    try:
        answer = compute()
    except ProblemError as exc:
        problem = {"type": "x", "title": exc.title, "status": exc.status, "detail": exc.detail}
        return httpx.Response(exc.status, json=problem)
    except RequestValidationError as exc:  # answered as the gateway's problem handler does
        first = exc.errors()[0]
        detail = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        title = "Request validation failed"
        return httpx.Response(
            422, json={"type": "x", "title": title, "status": 422, "detail": detail}
        )
    return httpx.Response(200, json=answer.model_dump(mode="json"))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    catalog = CatalogGateway()
    gateway = FakeGateway(
        {
            ("GET", "/v1/gpus"): catalog.gpus,
            ("POST", "/v1/estimates"): catalog.estimate,
            ("GET", "/v1/recommendations"): catalog.recommendations,
        }
    )
    use_transport(monkeypatch, gateway)
    return gateway


def test_gpus_prints_the_reference_table_without_invented_prices(fake: FakeGateway) -> None:
    result = run("gpus")
    assert result.exit_code == 0, result.output
    rtx = next(line for line in result.stdout.splitlines() if "RTX 4090" in line)
    for cell in ("Ada Lovelace", "24 GB", "1,008 GB/s", "≈ 15 B", "≈ 7 B", "—"):
        assert cell in rtx
    for gpu in load_gpu_catalog():
        assert gpu.name in result.stdout
    assert fake.requests[0].url == "http://127.0.0.1:8000/v1/gpus"


def test_a_best_ask_is_shown_once_the_api_has_one() -> None:
    asks = {
        "on_demand": {"price": "0.40", "currency": "USD", "gpus": 2},
        "interruptible": {"price": "0.33", "currency": "USD", "gpus": 8},
    }
    assert price_cell(GpuOutBestAsk.from_dict(asks)) == "from $0.33"
    assert price_cell(GpuOutBestAsk.from_dict({})) == "—"
    assert price_cell(UNSET) == "—"


def test_gpus_json_is_the_api_answer_and_the_url_comes_from_the_environment(
    fake: FakeGateway,
) -> None:
    result = run("gpus", "--json", env={"GPUX_API_URL": "http://gw.example:9000"})
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == len(load_gpu_catalog())
    assert fake.requests[0].url.host == "gw.example"


def test_fit_prints_the_breakdown_and_which_gpus_hold_it(fake: FakeGateway) -> None:
    result = run("fit", "llama-3.1-8b", "--method", "qlora", "--seq-len", "4096")
    assert result.exit_code == 0, result.output
    assert "Llama 3.1 8B, qlora" in result.stdout
    assert "optimizer states" in result.stdout
    rtx = next(line for line in result.stdout.splitlines() if "RTX 4090" in line)
    assert "yes" in rtx
    assert "fits on" in result.stdout
    sent = json.loads(fake.requests[0].content)
    assert sent["model"] == "llama-3.1-8b"
    assert sent["seq_len"] == 4096


def test_fit_takes_a_bare_size_as_a_custom_model(fake: FakeGateway) -> None:
    result = run("fit", "13b", "--method", "full", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(fake.requests[0].content)["params_b"] == 13.0
    assert json.loads(result.stdout)["model"]["custom"] is True


def test_a_problem_answer_is_one_line_on_stderr(fake: FakeGateway) -> None:
    result = run("fit", "gpt-17", "--method", "lora")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "gpux: 422 Request validation failed: body.model: unknown model id 'gpt-17'"
    ]


def test_an_unreachable_api_is_one_line_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    use_transport(monkeypatch, refuse)
    result = run("gpus", "--api", "http://127.0.0.1:1")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gpux: cannot reach the gpux API at http://127.0.0.1:1")


def test_recommend_lists_the_gpus_that_fit_cheapest_first_with_time_and_cost(
    fake: FakeGateway,
) -> None:
    result = run("recommend", "llama-3.1-8b", "--method", "qlora", "--examples", "5000")
    assert result.exit_code == 0, result.output
    request = fake.last
    assert (request.method, request.url.path) == ("GET", "/v1/recommendations")
    assert "authorization" not in request.headers
    sent = request.url.params
    assert (sent["model"], sent["method"], sent["examples"]) == ("llama-3.1-8b", "qlora", "5000")
    assert (sent["currency"], sent["tier"]) == ("USD", "on_demand")
    rows = [line for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert "RTX 4090" in rows[0]  # the cheaper of the two GPUs on offer first
    assert "$0.40" in rows[0]
    assert "H100" in rows[1]
    assert "$2.47" in rows[1]  # 2.467391 to the cent
    assert "cheapest first" in result.stdout
    as_json = json.loads(run("recommend", "llama-3.1-8b", "--method", "qlora", "--json").stdout)
    assert as_json["ranked_by"] == "cost"
    assert as_json["items"][1]["price_per_gpu_hour"] == "2.467391"  # raw


def test_recommend_names_an_unknown_model_and_refuses_an_unknown_method(
    fake: FakeGateway,
) -> None:
    unknown = run("recommend", "gpt-17", "--method", "lora")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("gpux: 422 ")
    assert "gpt-17" in unknown.stderr
    sent = len(fake.requests)
    refused = run("recommend", "llama-3.1-8b", "--method", "inference")
    assert refused.exit_code == 2
    assert len(fake.requests) == sent
