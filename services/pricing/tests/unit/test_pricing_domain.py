from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.candles import Interval, bucket_start, roll
from gpux_pricing.domain.fx import FxError, Rate, RateTable
from gpux_pricing.domain.market import ANY_REGION, LiveOffer, Market
from gpux_pricing.domain.validation import Band, OfferFacts, Rejection, SellerView, check_offer

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
RATES = RateTable.of(
    Rate(Currency.USD, Currency.EUR, Decimal("0.90"), NOW),
    Rate(Currency.GBP, Currency.EUR, Decimal("1.20"), NOW),
)
SELLERS = {
    "s1": SellerView(AccountStatus.ACTIVE, True),
    "s2": SellerView(AccountStatus.SUSPENDED, True),
    "b1": SellerView(AccountStatus.ACTIVE, False),
}
BANDS = {"rtx-4090": Band(Decimal("0.05"), Decimal("10"))}


def facts(**change: object) -> OfferFacts:
    base = {
        "seller_id": "s1",
        "gpu": "rtx-4090",
        "price": Decimal("0.33"),
        "currency": "USD",
        "available_until": None,
    }
    return OfferFacts(**{**base, **change})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "reference", "reason"),
    [
        ({"seller_id": "nobody"}, Decimal("0.30"), Rejection.SELLER_UNKNOWN),
        ({"seller_id": "s2"}, Decimal("0.30"), Rejection.SELLER_INACTIVE),
        ({"seller_id": "b1"}, Decimal("0.30"), Rejection.SELLER_INACTIVE),
        ({"gpu": "tpu-v5"}, Decimal("0.30"), Rejection.UNKNOWN_GPU),
        ({"currency": "JPY"}, Decimal("0.30"), Rejection.UNSUPPORTED_CURRENCY),
        ({"price": Decimal("0")}, Decimal("0"), Rejection.PRICE_NOT_POSITIVE),
        ({"price": Decimal("0.12345")}, Decimal("0.11"), Rejection.PRICE_PRECISION),
        ({"available_until": NOW}, Decimal("0.30"), Rejection.WINDOW_IN_PAST),
        ({}, None, Rejection.NO_FX_RATE),
        ({}, Decimal("11"), Rejection.PRICE_OUT_OF_BAND),
        ({}, Decimal("0.30"), None),
    ],
)
def test_offer_checks(
    change: dict[str, object], reference: Decimal | None, reason: Rejection | None
) -> None:
    got = check_offer(
        facts(**change), sellers=SELLERS, gpus=BANDS, reference_price=reference, now=NOW
    )
    assert got is reason


def test_first_reason_in_precedence_order_wins() -> None:
    # Unknown GPU and a bad price at once: the GPU comes first in the documented order.
    order = list(Rejection)
    assert order.index(Rejection.UNKNOWN_GPU) < order.index(Rejection.PRICE_NOT_POSITIVE)
    got = check_offer(
        facts(gpu="tpu-v5", price=Decimal("-1")),
        sellers=SELLERS,
        gpus=BANDS,
        reference_price=None,
        now=NOW,
    )
    assert got is Rejection.UNKNOWN_GPU


def test_fx_converts_through_the_reference_and_refuses_stale_rates() -> None:
    assert RATES.convert(Decimal("1.00"), Currency.USD, Currency.EUR, NOW) == Decimal("0.900000")
    assert RATES.convert(Decimal("1.20"), Currency.GBP, Currency.USD, NOW) == Decimal("1.600000")
    with pytest.raises(FxError, match="stale"):
        RATES.factor(Currency.USD, NOW + timedelta(hours=2), max_age=timedelta(hours=1))
    with pytest.raises(FxError):
        RateTable.of().factor(Currency.GBP, NOW, None)


def test_an_older_rate_never_replaces_a_newer_one() -> None:
    older = Rate(Currency.USD, Currency.EUR, Decimal("0.5"), NOW - timedelta(days=1))
    assert RATES.with_rate(older).factor(Currency.USD, NOW, None) == Decimal("0.90")


def offer(
    oid: str, price: str, currency: Currency, gpus: int, region: str | None = None
) -> LiveOffer:
    amount = Decimal(price)
    return LiveOffer(
        oid,
        "s1",
        "rtx-4090",
        "on_demand",
        region,
        amount,
        currency,
        gpus,
        RATES.reference_micros(amount, currency, NOW),
    )


def test_best_ask_is_cheapest_in_reference_terms_and_moves() -> None:
    market = Market()
    market.upsert(offer("a", "0.40", Currency.EUR, 4))  # 0.40 EUR
    market.upsert(offer("b", "0.40", Currency.USD, 2))  # 0.36 EUR
    market.upsert(offer("c", "0.31", Currency.GBP, 8, region="eu-west"))  # 0.372 EUR
    overall = market.quotes("rtx-4090", "on_demand")[0]
    assert overall.region == ANY_REGION
    assert overall.best is not None
    assert overall.best.offer_id == "b"
    assert overall.gpus_at_best == 2
    assert [(lvl.reference_micros, lvl.gpus) for lvl in overall.depth] == [
        (360_000, 2),
        (372_000, 8),
        (400_000, 4),
    ]
    market.set_remaining("b", 1)  # partly filled
    assert market.quotes("rtx-4090", "on_demand")[0].gpus_at_best == 1
    market.remove("b")  # withdrawn
    assert market.quotes("rtx-4090", "on_demand")[0].best.offer_id == "c"  # type: ignore[union-attr]
    market.upsert(offer("c", "0.40", Currency.GBP, 8, region="eu-west"))  # re-priced up
    assert market.quotes("rtx-4090", "on_demand")[0].best.offer_id == "a"  # type: ignore[union-attr]
    market.set_remaining("a", 0)  # exhausted
    regional = {q.region: q for q in market.quotes("rtx-4090", "on_demand")}
    assert regional["eu-west"].best.offer_id == "c"  # type: ignore[union-attr]
    market.remove("c")
    assert market.quotes("rtx-4090", "on_demand")[0].best is None


offers_strategy = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=500),
        st.sampled_from(list(Currency)),
        st.integers(min_value=0, max_value=16),
    ),
    max_size=30,
)


@given(offers_strategy)
def test_best_ask_and_depth_agree_with_a_linear_scan(rows: list[tuple[int, Currency, int]]) -> None:
    market = Market(depth_levels=1000)
    live = []
    for i, (cents, currency, gpus) in enumerate(rows):
        o = offer(f"o{i:03d}", str(Decimal(cents) / 100), currency, gpus)
        market.upsert(o)
        if gpus > 0:
            live.append(o)
    quote = market.quotes("rtx-4090", "on_demand")[0]
    assert sum(level.gpus for level in quote.depth) == sum(o.remaining for o in live)
    if live:
        cheapest = min(o.reference_micros for o in live)
        assert quote.best is not None
        assert quote.best.reference_micros == cheapest
        assert quote.gpus_at_best == sum(
            o.remaining for o in live if o.reference_micros == cheapest
        )
    else:
        assert quote.best is None


def test_candles_roll_open_high_low_close_and_vwap() -> None:
    start = bucket_start(datetime(2026, 11, 29, 12, 34, 56, tzinfo=UTC), Interval.HOUR)
    assert start == datetime(2026, 11, 29, 12, tzinfo=UTC)
    candle = None
    for price, gpus in (("0.40", 2), ("0.50", 1), ("0.30", 1)):
        candle = roll(candle, start, Decimal(price), gpus)
    assert candle is not None
    assert (candle.open, candle.high, candle.low, candle.close) == (
        Decimal("0.40"),
        Decimal("0.50"),
        Decimal("0.30"),
        Decimal("0.30"),
    )
    assert candle.gpus == 4
    assert candle.vwap == Decimal("0.40")
    later = roll(candle, start + timedelta(hours=1), Decimal("0.6"), 1)
    assert (later.open, later.gpus) == (Decimal("0.6"), 1)


def test_each_gpu_may_have_its_own_sanity_band() -> None:
    settings = PricingSettings(bands={"h100-sxm": (Decimal("0.50"), Decimal("20"))})
    assert settings.band_for("h100-sxm") == Band(Decimal("0.50"), Decimal("20"))
    assert settings.band_for("rtx-4090") == Band(Decimal("0.01"), Decimal("100"))
