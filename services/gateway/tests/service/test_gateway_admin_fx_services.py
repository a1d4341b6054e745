"""An FX rate the admin publishes, on the memory unit of work: the request's rules, the one
``fx.rate_published`` it queues (named for the admin and the reason, as of now), and its
Idempotency-Key."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.topics import FX_RATES
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.admin import service as admin
from gpux_gateway.admin.schemas import FxRateIn
from gpux_gateway.domain.idempotency import Once
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit

BODY = {"base": "USD", "rate": "0.9199632015", "reason": "ECB feed down since Friday"}


def once(key: str | None, fingerprint: str = "f") -> Once:
    return Once(scope="admin", key=key, fingerprint=fingerprint, ttl=timedelta(hours=48))


def body(**changes: Any) -> FxRateIn:
    return FxRateIn.model_validate({**BODY, **changes})


async def test_a_published_rate_is_one_event_on_fx_rates_named_for_the_admin_and_reason() -> None:
    uow = MemoryGatewayUnitOfWork()
    async with uow:
        outcome = await admin.publish_rate(uow, body=body(), once=once(None))
        await uow.commit()
    (message,) = uow.published
    assert (message.topic, message.key) == (FX_RATES, "USD/EUR")
    rate = message.envelope.payload
    assert isinstance(rate, RatePublished)
    assert (rate.base, rate.quote, rate.rate) == (
        Currency.USD,
        Currency.EUR,
        Decimal("0.9199632015"),
    )
    assert rate.as_of == EPOCH  # the unit's instant: it stands until a newer rate comes
    assert rate.source == "admin: ECB feed down since Friday"
    assert message.envelope.event_type == "fx.rate_published"
    assert outcome.status_code == 202
    assert outcome.body == {
        "base": "USD",
        "quote": "EUR",
        "rate": "0.9199632015",
        "as_of": "2026-01-01T00:00:00Z",
        "source": "admin: ECB feed down since Friday",
        "rate_id": message.envelope.event_id,
        "status": "requested",
    }


async def test_a_retried_rate_is_published_once_per_idempotency_key() -> None:
    uow = MemoryGatewayUnitOfWork()
    outcomes = []
    for _ in range(2):
        async with uow:
            outcomes.append(await admin.publish_rate(uow, body=body(), once=once("fx-1")))
            await uow.commit()
    assert len(uow.published) == 1
    assert outcomes[0].body == outcomes[1].body
    assert (outcomes[0].replayed, outcomes[1].replayed) == (False, True)
    async with uow:
        with pytest.raises(ProblemError) as reused:
            await admin.publish_rate(uow, body=body(rate="0.93"), once=once("fx-1", "other"))
    assert (reused.value.status, reused.value.slug) == (422, "idempotency-key-reused")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"base": "EUR"}, "base"),  # the reference currency's rate is 1
        ({"base": "CHF"}, "base"),
        ({"rate": "0"}, "rate"),
        ({"rate": "-0.92"}, "rate"),
        ({"rate": "1e3"}, "rate"),  # no exponent, as the pattern says
        ({"rate": "0.00000000001"}, "rate"),  # 11 decimals
        ({"rate": "1000000"}, "rate"),
        ({"rate": 0.92}, "rate"),  # a float is no rate
        ({"reason": ""}, "reason"),
        ({"reason": "x" * 181}, "reason"),
        ({"reason": "line\nbreak"}, "reason"),
        ({"quote": "USD"}, "quote"),  # always into EUR: not a field
    ],
)
def test_a_rate_request_outside_the_rules_is_refused(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        body(**changes)
    assert [e["loc"][0] for e in refused.value.errors()] == [field]


@pytest.mark.parametrize("rate", ["0.0000000001", "1", "1.18", "999999.9999999999", "0.92"])
def test_every_rate_the_pattern_allows_is_read_exactly(rate: str) -> None:
    assert body(rate=rate).rate == Decimal(rate)
