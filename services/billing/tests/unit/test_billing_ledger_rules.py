"""The ledger's pure rules: rejection reasons in precedence order, builders, rounding."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_billing.adapters.memory.ledger import MemoryLedger
from gpux_billing.domain import transfers
from gpux_billing.domain.amounts import accrued_micros, convert, fee_split
from gpux_billing.domain.ledger import (
    PLATFORM,
    AccountKey,
    AccountKind,
    Entry,
    FxQuote,
    RejectionReason,
    Transfer,
    TransferInvalid,
    TransferKind,
)
from gpux_billing.domain.posting import plan_batch
from gpux_billing.domain.transfers import Sale
from gpux_contracts.money import Currency, to_micros

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
USD, EUR = Currency.USD, Currency.EUR


def key(owner: str, kind: str, currency: Currency = USD) -> AccountKey:
    return AccountKey(owner, currency, AccountKind(kind))


def hold_entries(amount: int = 5) -> tuple[Entry, ...]:
    return (Entry(key("b1", "available"), -amount), Entry(key("b1", "held"), amount))


def fx_entries(base_amount: int, quote_amount: int) -> tuple[Entry, ...]:
    return (
        Entry(key("b1", "available", USD), -base_amount),
        Entry(key(PLATFORM, "fx_house", USD), base_amount),
        Entry(key(PLATFORM, "fx_house", EUR), -quote_amount),
        Entry(key("b1", "available", EUR), quote_amount),
    )


QUOTE = FxQuote(USD, EUR, Decimal("0.9"), NOW)


def reason_of(**fields: object) -> RejectionReason | None:
    base: dict[str, object] = {
        "id": "t-1",
        "kind": TransferKind.HOLD,
        "entries": hold_entries(),
        "created_at": NOW,
    }
    try:
        Transfer(**{**base, **fields})  # type: ignore[arg-type]
    except TransferInvalid as refused:
        return refused.reason
    return None


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, None),
        ({"kind": "gift"}, RejectionReason.KIND_UNKNOWN),
        ({"id": ""}, RejectionReason.ID_INVALID),
        ({"id": "x" * 129}, RejectionReason.ID_INVALID),
        ({"id": "has space"}, RejectionReason.ID_INVALID),
        ({"id": "-leading"}, RejectionReason.ID_INVALID),
        ({"created_at": datetime(2026, 1, 1)}, RejectionReason.TIMESTAMP_NOT_AWARE),
        ({"reference": "x" * 201}, RejectionReason.REFERENCE_INVALID),
        ({"reference": "line\nbreak"}, RejectionReason.REFERENCE_INVALID),
        ({"entries": hold_entries()[:1]}, RejectionReason.ENTRIES_COUNT),
        ({"entries": (Entry(key("b 1", "available"), -5), Entry(key("b1", "held"), 5))},
         RejectionReason.OWNER_INVALID),
        ({"entries": (Entry(key(PLATFORM, "available"), -5), Entry(key("b1", "held"), 5))},
         RejectionReason.OWNER_KIND_MISMATCH),
        ({"entries": (Entry(key("b1", "available"), -5), Entry(key("b1", "fx_house"), 5))},
         RejectionReason.OWNER_KIND_MISMATCH),
        ({"entries": (Entry(key("b1", "held"), -5), Entry(key("b1", "held"), 5))},
         RejectionReason.ACCOUNTS_NOT_DISTINCT),
        ({"entries": (Entry(key("b1", "available"), 0), Entry(key("b1", "held"), 0))},
         RejectionReason.AMOUNT_ZERO),
        ({"entries": (Entry(key("b1", "available"), True), Entry(key("b1", "held"), -1))},
         RejectionReason.AMOUNT_ZERO),
        ({"entries": hold_entries(10**15 + 1)}, RejectionReason.AMOUNT_TOO_LARGE),
        ({"entries": (Entry(key("b1", "available"), -5), Entry(key("b1", "held"), 4))},
         RejectionReason.UNBALANCED),
        ({"entries": fx_entries(100, 90)}, RejectionReason.FX_MISSING),
        ({"fx": QUOTE}, RejectionReason.FX_UNEXPECTED),
        ({"kind": TransferKind.FX}, RejectionReason.FX_UNEXPECTED),
        ({"entries": fx_entries(100, 90), "fx": FxQuote(USD, Currency.GBP, Decimal(1), NOW)},
         RejectionReason.FX_CURRENCIES),
        ({"entries": fx_entries(100, 90), "fx": replace(QUOTE, rate=Decimal("-0.9"))},
         RejectionReason.FX_RATE_INVALID),
        ({"entries": fx_entries(100, 90), "fx": replace(QUOTE, rate=Decimal("0." + "3" * 29))},
         RejectionReason.FX_RATE_INVALID),
        ({"entries": (*hold_entries(), Entry(key("b1", "available", EUR), -9),
                      Entry(key("b1", "held", EUR), 9)), "fx": QUOTE},
         RejectionReason.FX_HOUSE_MISSING),
        ({"entries": fx_entries(100, 91), "fx": QUOTE}, RejectionReason.FX_AMOUNT_MISMATCH),
        ({"entries": fx_entries(100, 90), "fx": QUOTE, "kind": TransferKind.FX}, None),
        ({"entries": fx_entries(100, 90), "fx": replace(QUOTE, rate_at=datetime(2026, 1, 1))},
         RejectionReason.TIMESTAMP_NOT_AWARE),
    ],
)  # fmt: skip
def test_each_rule_has_its_reason(
    fields: dict[str, object], reason: RejectionReason | None
) -> None:
    assert reason_of(**fields) is reason


def test_the_first_broken_rule_wins() -> None:
    # Bad id, naive time, one zero entry: the id comes first in the precedence order.
    assert (
        reason_of(id="", created_at=datetime(2026, 1, 1), entries=()) is RejectionReason.ID_INVALID
    )
    assert reason_of(entries=(Entry(key("b1", "held"), -5), Entry(key("b1", "held"), 4))) is (
        RejectionReason.ACCOUNTS_NOT_DISTINCT
    )
    assert list(RejectionReason)[:3] == [
        RejectionReason.KIND_UNKNOWN,
        RejectionReason.AMOUNT_NOT_POSITIVE,
        RejectionReason.ID_INVALID,
    ]


def test_unknown_account_kinds_and_currencies_are_refused() -> None:
    with pytest.raises(TransferInvalid) as refused:
        AccountKey("b1", "JPY", AccountKind.AVAILABLE)  # type: ignore[arg-type]
    assert refused.value.reason is RejectionReason.KIND_UNKNOWN
    with pytest.raises(TransferInvalid):
        AccountKey("b1", USD, "wallet")  # type: ignore[arg-type]


def test_a_replay_is_the_same_transfer_whatever_the_entry_order() -> None:
    one = Transfer("t-1", TransferKind.HOLD, hold_entries(), NOW)
    swapped = Transfer("t-1", TransferKind.HOLD, hold_entries()[::-1], NOW)
    elsewhere = Transfer("t-1", TransferKind.HOLD, hold_entries(), NOW.astimezone(UTC))
    assert one.same_as(swapped)
    assert one.same_as(elsewhere)
    assert not one.same_as(Transfer("t-1", TransferKind.HOLD, hold_entries(6), NOW))
    assert not one.same_as(Transfer("t-1", TransferKind.HOLD, hold_entries(), NOW, reference="x"))
    assert not one.same_as(Transfer("t-1", TransferKind.RELEASE, hold_entries(), NOW))
    same_rate = Transfer("t-2", TransferKind.FX, fx_entries(100, 90), NOW, QUOTE)
    written_differently = replace(QUOTE, rate=Decimal("0.900"))
    assert same_rate.same_as(
        Transfer("t-2", TransferKind.FX, fx_entries(100, 90), NOW, written_differently)
    )
    assert written_differently.rate_text == "0.9"


# -- the one rounding rule -----------------------------------------------------------------


def test_a_ten_percent_fee_on_two_and_a_half_cents_splits_exactly() -> None:
    amount = to_micros(Decimal("0.025"))
    assert fee_split(amount, 1000) == (22_500, 2_500)
    charge = transfers.charge("c-1", Sale("b1", "s1", USD, amount), 1000, NOW)
    credits = {e.account.kind: e.amount_micros for e in charge.entries if e.amount_micros > 0}
    assert credits == {AccountKind.SELLER_PAYABLE: 22_500, AccountKind.PLATFORM_REVENUE: 2_500}


@pytest.mark.parametrize(
    ("amount", "bps", "fee"),
    [(5, 1000, 0), (15, 1000, 2), (25, 1000, 2), (35, 1000, 4), (1, 5000, 0), (3, 5000, 2),
     (7, 0, 0), (7, 10_000, 7)],
)  # fmt: skip
def test_fees_round_half_to_even(amount: int, bps: int, fee: int) -> None:
    assert fee_split(amount, bps) == (amount - fee, fee)


@given(st.integers(0, 10**15), st.integers(0, 10_000))
def test_fee_parts_always_sum_to_the_charge(amount: int, bps: int) -> None:
    seller, fee = fee_split(amount, bps)
    assert seller + fee == amount
    assert 0 <= fee <= amount
    assert abs(Decimal(fee) - Decimal(amount) * bps / 10_000) <= Decimal("0.5")


def test_conversion_rounds_once_half_to_even() -> None:
    assert convert(100, Decimal("0.9")) == 90
    assert convert(5, Decimal("0.5")) == 2  # 2.5 -> 2
    assert convert(7, Decimal("0.5")) == 4  # 3.5 -> 4
    # A long cross rate: rounding the product to 28 digits first would give ...0002 here.
    amount, rate = 999_999_999_999_999, Decimal("1.000000000000000500000000001")
    assert convert(amount, rate) == 1_000_000_000_000_000


def test_per_second_charges_are_cumulative_and_exact() -> None:
    # Two GPUs at 0.50 USD/GPU-hour, stopped after 90 s: exactly 0.025 USD.
    per_hour = 2 * to_micros(Decimal("0.50"))
    assert accrued_micros(per_hour, 90) == 25_000
    assert accrued_micros(per_hour, 3600) == per_hour
    # Settled every 7 s: the increments add up to the exact total, with no drift.
    price = to_micros(Decimal("0.3333"))
    charged, elapsed = 0, 0
    while elapsed < 3600:
        elapsed = min(elapsed + 7, 3600)
        charged += accrued_micros(price, elapsed) - charged
    assert charged == price == accrued_micros(price, 3600)


@given(st.integers(1, 10**9), st.integers(0, 10**6))
def test_accrual_never_goes_backwards(price: int, elapsed: int) -> None:
    assert 0 <= accrued_micros(price, elapsed) <= accrued_micros(price, elapsed + 1)


def test_amount_helpers_refuse_floats_and_negatives() -> None:
    with pytest.raises(TypeError):
        fee_split(0.5, 1000)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fee_bps"):
        fee_split(10, 10_001)
    with pytest.raises(ValueError, match="rate"):
        convert(10, Decimal(0))
    with pytest.raises(TypeError):
        accrued_micros(10, 1.5)  # type: ignore[arg-type]


# -- builders ------------------------------------------------------------------------------


def amounts_of(transfer: Transfer) -> dict[str, int]:
    return {str(e.account): e.amount_micros for e in transfer.entries}


def test_standard_transfers_move_money_the_documented_way() -> None:
    assert amounts_of(transfers.topup("t", "b1", USD, 7, NOW)) == {
        "platform/USD/topup_clearing": -7,
        "b1/USD/available": 7,
    }
    assert amounts_of(transfers.hold("h", "b1", "USD", 7, NOW)) == {
        "b1/USD/available": -7,
        "b1/USD/held": 7,
    }
    assert amounts_of(transfers.release("r", "b1", USD, 7, NOW)) == {
        "b1/USD/held": -7,
        "b1/USD/available": 7,
    }
    assert amounts_of(
        transfers.charge("c", Sale("b1", "s1", USD, 100), 1000, NOW, source=AccountKind.AVAILABLE)
    ) == {
        "b1/USD/available": -100,
        "s1/USD/seller_payable": 90,
        "platform/USD/platform_revenue": 10,
    }
    assert amounts_of(transfers.charge("c", Sale("b1", "s1", USD, 100), 0, NOW)) == {
        "b1/USD/held": -100,
        "s1/USD/seller_payable": 100,
    }


def test_a_charge_across_currencies_goes_through_the_fx_house() -> None:
    quote = FxQuote(USD, EUR, Decimal("0.92"), NOW - timedelta(seconds=30))
    charge = transfers.charge("c", Sale("b1", "s1", USD, 25_000), 1000, NOW, fx=quote)
    assert amounts_of(charge) == {
        "b1/EUR/held": -23_000,
        "platform/EUR/fx_house": 23_000,
        "platform/USD/fx_house": -25_000,
        "s1/USD/seller_payable": 22_500,
        "platform/USD/platform_revenue": 2_500,
    }
    assert charge.fx == quote
    with pytest.raises(TransferInvalid) as refused:
        transfers.charge("c", Sale("b1", "s1", EUR, 25_000), 1000, NOW, fx=quote)
    assert refused.value.reason is RejectionReason.FX_CURRENCIES


def test_an_exchange_converts_with_the_rate_and_its_timestamp() -> None:
    quote = FxQuote(USD, EUR, Decimal("0.9"), NOW)
    fx = transfers.exchange(
        "x", key("b1", "available", USD), key("b1", "available", EUR), 100, quote, created_at=NOW
    )
    assert fx.kind is TransferKind.FX
    assert fx.fx == quote
    assert amounts_of(fx) == {
        "b1/USD/available": -100,
        "platform/USD/fx_house": 100,
        "platform/EUR/fx_house": -90,
        "b1/EUR/available": 90,
    }
    with pytest.raises(TransferInvalid) as refused:
        transfers.exchange(
            "x",
            key("b1", "available", EUR),
            key("b1", "available", USD),
            100,
            quote,
            created_at=NOW,
        )
    assert refused.value.reason is RejectionReason.FX_CURRENCIES
    with pytest.raises(TransferInvalid) as refused:
        transfers.exchange("x", key("b1", "available", USD), key("b1", "available", EUR), 1,
                           replace(quote, rate=Decimal("0.1")), created_at=NOW)  # fmt: skip
    assert refused.value.reason is RejectionReason.AMOUNT_ZERO


def test_a_reversal_negates_every_entry() -> None:
    original = transfers.charge("c", Sale("b1", "s1", USD, 100), 1000, NOW)
    undo = transfers.reversal(original, "c-undo", NOW)
    assert undo.kind is TransferKind.CORRECTION
    assert undo.reference == "reverses c"
    assert amounts_of(undo) == {k: -v for k, v in amounts_of(original).items()}


@pytest.mark.parametrize("amount", [0, -5, True])
def test_builders_want_positive_integer_amounts(amount: int) -> None:
    with pytest.raises(TransferInvalid) as refused:
        transfers.hold("h", "b1", USD, amount, NOW)
    assert refused.value.reason is RejectionReason.AMOUNT_NOT_POSITIVE


def test_a_batch_with_one_id_twice_is_a_replay_or_a_mismatch() -> None:
    a = transfers.topup("t", "b1", USD, 5, NOW)
    unique, positions = plan_batch([a, a])
    assert unique == [a]
    assert positions == [0, 0]
    with pytest.raises(Exception, match="id_reused"):
        plan_batch([a, transfers.topup("t", "b1", USD, 6, NOW)])


async def test_the_memory_ledger_refuses_a_batch_as_a_whole() -> None:
    ledger = MemoryLedger()
    batch = [transfers.topup("t", "b1", USD, 5, NOW), transfers.hold("h", "b1", USD, 6, NOW)]
    with pytest.raises(Exception, match="insufficient_funds"):
        await ledger.post_many(batch)
    assert await ledger.balances("b1") == []
    # Floors apply to the net change of a batch: a top-up covers a hold posted with it.
    batch = [transfers.hold("h", "b1", USD, 5, NOW), transfers.topup("t", "b1", USD, 5, NOW)]
    assert [p.replayed for p in await ledger.post_many(batch)] == [False, False]
