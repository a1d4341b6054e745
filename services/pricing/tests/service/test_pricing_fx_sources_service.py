"""The FX loader and its sources on the memory unit of work: the ECB over HTTP (a recorded
file served by httpx's mock transport: no network), its retries, what is published over the
rates pricing holds, failures counted with the last rates kept, and the age watch on a
manual clock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_platform.broker import Outgoing
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.ecb import EcbRates
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.config import DEFAULT_FX_FILE
from gpux_pricing.domain.fx import Rate
from gpux_pricing.entrypoints import loops
from gpux_pricing.service.fx import FileRates, RateSource, RateSourceError

pytestmark = pytest.mark.unit

URL = "https://ecb.test/stats/eurofxref/eurofxref-daily.xml"
RECORDED = (Path(__file__).resolve().parents[1] / "data" / "eurofxref-daily.xml").read_bytes()
ECB_AS_OF = datetime(2026, 11, 27, 13, 15, tzinfo=UTC)
Handler = Callable[[httpx.Request], httpx.Response]


def answers(*responses: httpx.Response | Exception) -> tuple[Handler, list[httpx.Request]]:
    """A mock transport's handler giving ``responses`` in turn, and the requests it saw."""
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handle, seen


class Pauses:
    """A sleep that records its pauses instead of waiting."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)


def ecb_source(handle: Handler, pauses: Pauses, attempts: int = 3) -> EcbRates:
    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return EcbRates(http, URL, attempts=attempts, backoff_s=1.0, sleep=pauses)


class Sent:
    """A publish that keeps what it was given."""

    def __init__(self) -> None:
        self.messages: list[Outgoing] = []

    async def __call__(self, messages: Sequence[Outgoing]) -> None:
        self.messages.extend(messages)

    def rates(self) -> dict[Currency, RatePublished]:
        return {m.envelope.payload.base: m.envelope.payload for m in self.messages}


def loader(
    source: RateSource, unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> tuple[loops.FxLoader, Sent]:
    sent = Sent()
    return loops.FxLoader(source, lambda: unit, sent, clock), sent


def reads(source: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("gpux_fx_reads_total", {"source": source, "outcome": outcome})
    return value or 0.0


async def test_the_ecb_source_reads_the_daily_file() -> None:
    handle, seen = answers(httpx.Response(200, content=RECORDED))
    rates = await ecb_source(handle, Pauses()).fetch(ECB_AS_OF)
    assert [str(r.url) for r in seen] == [URL]
    assert {r.base: r.rate for r in rates} == {
        Currency.USD: Decimal("0.9199632015"),
        Currency.GBP: Decimal("1.1800106201"),
    }
    assert {r.as_of for r in rates} == {ECB_AS_OF}


async def test_timeouts_and_server_errors_are_tried_again_with_doubling_pauses() -> None:
    pauses = Pauses()
    handle, seen = answers(
        httpx.ConnectTimeout("slow"), httpx.Response(503), httpx.Response(200, content=RECORDED)
    )
    rates = await ecb_source(handle, pauses).fetch(ECB_AS_OF)
    assert len(seen) == 3
    assert pauses.taken == [1.0, 2.0]
    assert len(rates) == 2


@pytest.mark.parametrize(
    ("responses", "tries"),
    [
        ((httpx.Response(404),), 1),  # a refusal is not tried again
        ((httpx.Response(200, content=b"<html>maintenance</html>"),), 1),  # nor a wrong page
        ((httpx.Response(500), httpx.ReadTimeout("slow"), httpx.Response(429)), 3),
    ],
)
async def test_a_source_that_gives_no_rates_raises_after_its_attempts(
    responses: tuple[httpx.Response | Exception, ...], tries: int
) -> None:
    handle, seen = answers(*responses)
    with pytest.raises(RateSourceError, match=r"ecb\.test"):
        await ecb_source(handle, Pauses()).fetch(ECB_AS_OF)
    assert len(seen) == tries


async def test_the_loader_publishes_the_source_rates_keyed_by_pair(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    handle, _ = answers(httpx.Response(200, content=RECORDED))
    fx, sent = loader(ecb_source(handle, Pauses()), unit, clock)
    before = reads("ecb", "published")
    assert await fx.load()
    assert sorted(m.key for m in sent.messages) == ["GBP/EUR", "USD/EUR"]
    assert sent.rates()[Currency.USD].rate == Decimal("0.9199632015")
    assert reads("ecb", "published") == before + 1


async def test_rates_older_than_those_held_are_not_published_over_them(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    # An admin's USD rate, newer than the ECB's day: republishing the ECB's must not bury it.
    admin = Rate(Currency.USD, Currency.EUR, Decimal("0.93"), ECB_AS_OF + timedelta(hours=3))
    unit.state.rates[Currency.USD] = admin
    handle, _ = answers(httpx.Response(200, content=RECORDED))
    fx, sent = loader(ecb_source(handle, Pauses()), unit, clock)
    assert await fx.load()
    assert set(sent.rates()) == {Currency.GBP}


async def test_a_failed_read_is_counted_logged_and_the_last_rates_stay(
    unit: MemoryPricingUnitOfWork, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    handle, _ = answers(httpx.Response(503), httpx.Response(503))
    fx, sent = loader(ecb_source(handle, Pauses(), attempts=2), unit, clock)
    before = reads("ecb", "failed")
    held = dict(unit.state.rates)
    with caplog.at_level(logging.WARNING, logger="gpux.pricing.fx"):
        assert not await fx.load()
    assert reads("ecb", "failed") == before + 1
    assert sent.messages == []
    assert unit.state.rates == held
    assert "the last rates stay" in caplog.text


async def test_the_loader_runs_at_start_then_every_period_and_sooner_after_a_failure(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    handle, seen = answers(
        httpx.Response(200, content=RECORDED),
        httpx.Response(404),
        httpx.Response(200, content=RECORDED),
    )
    fx, _ = loader(ecb_source(handle, Pauses()), unit, clock)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        if len(waits) == 3:
            raise StopAsyncIteration  # ends the loop after three reads
        waits.append(seconds)

    with pytest.raises(StopAsyncIteration):
        await fx.run(every_s=3600, retry_s=300, sleep=sleep)
    assert waits == [0, 3600, 300]
    assert len(seen) == 3


async def test_the_development_file_is_a_source_stamped_when_read(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    fx, sent = loader(FileRates(DEFAULT_FX_FILE), unit, clock)
    assert await fx.load()
    assert {r.as_of for r in sent.rates().values()} == {clock.now()}
    missing, _ = loader(FileRates(DEFAULT_FX_FILE.with_name("missing.toml")), unit, clock)
    assert not await missing.load()


def age(currency: Currency) -> float | None:
    return REGISTRY.get_sample_value("gpux_fx_rate_age_seconds", {"currency": currency.value})


async def test_a_rate_is_warned_once_older_than_the_threshold_and_its_age_is_a_gauge(
    unit: MemoryPricingUnitOfWork, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    fresh = clock.now()
    for currency in (Currency.USD, Currency.GBP):
        unit.state.rates[currency] = Rate(currency, Currency.EUR, Decimal("1.1"), fresh)
    warn_after = timedelta(days=4)
    with caplog.at_level(logging.WARNING, logger="gpux.pricing.fx"):
        assert await loops.check_fx_ages(lambda: unit, clock, warn_after) == []
        assert age(Currency.USD) == 0
        clock.advance(timedelta(days=3))
        assert await loops.check_fx_ages(lambda: unit, clock, warn_after) == []
        assert caplog.text == ""
        clock.advance(timedelta(days=1, seconds=1))
        unit.state.rates[Currency.GBP] = Rate(
            Currency.GBP, Currency.EUR, Decimal("1.2"), clock.now()
        )
        warned = await loops.check_fx_ages(lambda: unit, clock, warn_after)
    assert warned == [Currency.USD]
    assert age(Currency.USD) == 4 * 86400 + 1
    assert age(Currency.GBP) == 0
    assert "the USD/EUR rate is 96.0 h old" in caplog.text


async def test_a_currency_without_any_rate_is_warned(
    unit: MemoryPricingUnitOfWork, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    del unit.state.rates[Currency.GBP]
    unit.state.rates[Currency.USD] = Rate(Currency.USD, Currency.EUR, Decimal("0.92"), clock.now())
    with caplog.at_level(logging.WARNING, logger="gpux.pricing.fx"):
        assert await loops.check_fx_ages(lambda: unit, clock, timedelta(days=4)) == [Currency.GBP]
    assert "no GBP/EUR rate is held" in caplog.text


async def test_the_age_watch_checks_on_its_timer_and_survives_a_failed_check(
    clock: ManualClock,
) -> None:
    checks: list[datetime] = []
    waits: list[float] = []

    class Failing:
        async def __aenter__(self) -> MemoryPricingUnitOfWork:
            checks.append(clock.now())
            raise OSError("database away")

        async def __aexit__(self, *_: object) -> None:
            return None

    async def sleep(seconds: float) -> None:
        if len(waits) == 2:
            raise StopAsyncIteration
        waits.append(seconds)
        clock.advance(timedelta(seconds=seconds))

    with pytest.raises(StopAsyncIteration):
        await loops.watch_fx_ages(Failing, clock, timedelta(days=4), 60, sleep=sleep)
    assert waits == [60, 60]
    assert len(checks) == 2
