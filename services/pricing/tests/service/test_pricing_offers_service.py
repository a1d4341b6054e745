"""Offer commands on the memory unit of work: accepted, refused, changed, withdrawn; each once."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.accounts import AccountChanged, AccountStatus, Role
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    OfferAccepted,
    OfferChangeRequested,
    OfferStatus,
    OfferSubmitted,
    OfferWithdrawalRequested,
    OfferWithdrawn,
    Tier,
)
from gpux_contracts.topics import ACCOUNTS, OFFERS_COMMANDS, OFFERS_STATUS, PRICING_OFFERS, Topic
from gpux_devinfra.testing.payloads import offer_status, offer_submitted
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.domain.validation import Rejection
from gpux_pricing.service import HANDLERS_BY_TOPIC

pytestmark = pytest.mark.unit


async def apply(unit: MemoryPricingUnitOfWork, topic: Topic, *events: Envelope[Any]) -> Outcome:
    return await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: unit).apply(events)


def command(payload: Payload, clock: ManualClock) -> Envelope[Any]:
    return wrap(payload, producer="gateway", occurred_at=clock.now())


def offer(
    offer_id: str = "o1",
    price: str = "0.40",
    currency: Currency = Currency.USD,
    *,
    seller: str = "s1",
    gpu: str = "rtx-4090",
) -> OfferSubmitted:
    return offer_submitted(offer_id, price=price, currency=currency, seller_id=seller, gpu=gpu)


def sent(unit: MemoryPricingUnitOfWork, topic: Topic) -> list[Any]:
    return [m.envelope.payload for m in unit.published if m.topic == topic]


async def test_an_accepted_offer_goes_to_the_book_and_its_status_to_the_seller(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    event = command(offer(), clock)
    outcome = await apply(unit, OFFERS_COMMANDS, event)
    assert (outcome.applied, unit.commits) == (1, 1)
    assert sent(unit, OFFERS_STATUS) == [offer_status("o1", OfferStatus.ACCEPTED, 4)]
    assert sent(unit, PRICING_OFFERS) == [OfferAccepted(offer=offer(), revision=1)]
    # Ids derive from the command: handling it again (a crash before commit) sends the same.
    ids = [m.envelope.event_id for m in unit.published]
    assert ids == [stable_id(event.event_id, "status"), stable_id(event.event_id, "accepted")]
    assert all(m.envelope.causation_id == event.event_id for m in unit.published)
    assert all(m.key == "rtx-4090" for m in unit.published)
    row = unit.state.offers["o1"]
    assert (row.revision, row.status, row.reason) == (1, OfferStatus.ACCEPTED, None)


async def test_a_command_twice_and_the_same_offer_id_again_change_nothing(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    event = command(offer(), clock)
    await apply(unit, OFFERS_COMMANDS, event)
    again = await apply(unit, OFFERS_COMMANDS, event, command(offer(price="0.10"), clock))
    assert (again.duplicate, again.applied) == (1, 1)
    assert len(unit.published) == 2
    assert unit.state.offers["o1"].offer.price_per_gpu_hour == Decimal("0.40")


@pytest.mark.parametrize(
    ("submitted", "reason"),
    [
        (offer(gpu="tpu-v5"), Rejection.UNKNOWN_GPU),
        (offer(price="1000"), Rejection.PRICE_OUT_OF_BAND),
        (offer(price="0.12345"), Rejection.PRICE_PRECISION),
        (offer(currency=Currency.EUR, seller="suspended"), Rejection.SELLER_INACTIVE),
        (offer(currency=Currency.EUR, seller="buyer"), Rejection.SELLER_INACTIVE),
    ],
)
async def test_a_refused_offer_tells_the_seller_why_and_stays_off_the_book(
    unit: MemoryPricingUnitOfWork,
    clock: ManualClock,
    submitted: OfferSubmitted,
    reason: Rejection,
) -> None:
    accounts = [
        AccountChanged(
            account_id="suspended",
            name="x",
            roles=(Role.SELLER,),
            status=AccountStatus.SUSPENDED,
        ),
        AccountChanged(
            account_id="buyer", name="y", roles=(Role.BUYER,), status=AccountStatus.ACTIVE
        ),
    ]
    await apply(unit, ACCOUNTS, *(command(a, clock) for a in accounts))
    await apply(unit, OFFERS_COMMANDS, command(submitted, clock))
    [status] = sent(unit, OFFERS_STATUS)
    assert (status.status, status.reason, status.remaining_gpus) == (
        OfferStatus.REJECTED,
        reason.value,
        0,
    )
    assert sent(unit, PRICING_OFFERS) == []
    assert unit.state.offers[submitted.offer_id].status is OfferStatus.REJECTED


async def test_an_offer_in_a_currency_without_a_rate_is_refused(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    del unit.state.rates[Currency.GBP]
    await apply(unit, OFFERS_COMMANDS, command(offer(currency=Currency.GBP), clock))
    assert [s.reason for s in sent(unit, OFFERS_STATUS)] == [Rejection.NO_FX_RATE.value]


async def test_an_account_not_heard_of_yet_is_taken_as_an_active_seller(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(seller="new"), clock))
    assert [s.status for s in sent(unit, OFFERS_STATUS)] == [OfferStatus.ACCEPTED]


async def test_an_accepted_change_is_a_new_revision_for_the_book(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(), clock))
    change = OfferChangeRequested(
        offer_id="o1", seller_id="s1", gpu="rtx-4090", price_per_gpu_hour=Decimal("0.35"), gpus=2
    )
    await apply(unit, OFFERS_COMMANDS, command(change, clock))
    changed = offer(price="0.35").model_copy(update={"gpus": 2})
    assert sent(unit, PRICING_OFFERS)[-1] == OfferAccepted(
        offer=changed, revision=2, changed=["gpus", "price_per_gpu_hour"]
    )
    assert sent(unit, OFFERS_STATUS)[-1].remaining_gpus == 2
    assert unit.state.offers["o1"].revision == 2


async def test_a_refused_change_leaves_the_offer_as_it_was(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(), clock))
    change = OfferChangeRequested(
        offer_id="o1", seller_id="s1", gpu="rtx-4090", price_per_gpu_hour=Decimal("500")
    )
    event = command(change, clock)
    await apply(unit, OFFERS_COMMANDS, event)
    last = unit.published[-1]
    assert last.envelope.event_id == stable_id(event.event_id, "change-refused")
    assert last.envelope.payload == offer_status(
        "o1", OfferStatus.ACCEPTED, 4, reason=Rejection.PRICE_OUT_OF_BAND.value
    )
    assert len(sent(unit, PRICING_OFFERS)) == 1
    row = unit.state.offers["o1"]
    assert (row.revision, row.offer.price_per_gpu_hour) == (1, Decimal("0.40"))


async def withdraw_forwarded(unit: MemoryPricingUnitOfWork, clock: ManualClock) -> None:
    """s1 withdraws o1: pricing forwards the withdrawal to the book."""
    request = OfferWithdrawalRequested(offer_id="o1", seller_id="s1", gpu="rtx-4090")
    await apply(unit, OFFERS_COMMANDS, command(request, clock))
    assert sent(unit, PRICING_OFFERS)[-1] == OfferWithdrawn(
        offer_id="o1", seller_id="s1", gpu="rtx-4090"
    )


async def test_a_withdrawal_is_forwarded_to_the_book(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(), clock))
    await withdraw_forwarded(unit, clock)


async def test_commands_for_someone_elses_or_a_closed_offer_are_ignored(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(), clock), command(offer("o2"), clock))
    before = len(unit.published)
    foreign = [
        OfferChangeRequested(
            offer_id="o1", seller_id="s2", gpu="rtx-4090", price_per_gpu_hour=Decimal("0.3")
        ),
        OfferWithdrawalRequested(offer_id="o1", seller_id="s2", gpu="rtx-4090"),
        OfferWithdrawalRequested(offer_id="nope", seller_id="s1", gpu="rtx-4090"),
    ]
    await apply(unit, OFFERS_COMMANDS, *(command(p, clock) for p in foreign))
    assert len(unit.published) == before
    # Withdrawn by the book (matching reports it): a later change of it is ignored.
    withdrawn = offer_status("o2", OfferStatus.WITHDRAWN, 0)
    await apply(unit, OFFERS_STATUS, wrap(withdrawn, producer="matching", occurred_at=clock.now()))
    change = OfferChangeRequested(offer_id="o2", seller_id="s1", gpu="rtx-4090", gpus=1)
    await apply(unit, OFFERS_COMMANDS, command(change, clock))
    assert [m for m in unit.published[before:] if m.topic == PRICING_OFFERS] == []
    assert unit.state.offers["o2"].revision == 1


def two_price(offer_id: str = "o1", second: str = "0.25", **fields: Any) -> OfferSubmitted:
    """An on-demand offer at 0.40 USD, sold as interruptible at ``second`` too."""
    return offer_submitted(
        offer_id, price="0.40", interruptible_price_per_gpu_hour=Decimal(second), **fields
    )


def change(**fields: Any) -> OfferChangeRequested:
    return OfferChangeRequested(offer_id="o1", seller_id="s1", gpu="rtx-4090", **fields)


async def test_a_two_price_offer_goes_to_the_book_with_its_interruptible_price_and_notice(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    submitted = two_price(interruption_notice_seconds=900)
    await apply(unit, OFFERS_COMMANDS, command(submitted, clock))
    [accepted] = sent(unit, PRICING_OFFERS)
    assert accepted == OfferAccepted(offer=submitted, revision=1)
    assert accepted.offer.interruptible_price_per_gpu_hour == Decimal("0.25")
    assert accepted.offer.interruption_notice_seconds == 900
    assert sent(unit, OFFERS_STATUS) == [offer_status("o1", OfferStatus.ACCEPTED, 4)]


@pytest.mark.parametrize(
    ("submitted", "reason"),
    [
        (two_price(second="0.41"), Rejection.INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND),
        (two_price(second="0"), Rejection.INTERRUPTIBLE_PRICE_NOT_POSITIVE),
        (two_price(second="0.12345"), Rejection.INTERRUPTIBLE_PRICE_PRECISION),
        # 0.001 USD = 0.00092 EUR, under the default band's 0.01 EUR.
        (two_price(second="0.001"), Rejection.INTERRUPTIBLE_PRICE_OUT_OF_BAND),
        (two_price(tier=Tier.INTERRUPTIBLE), Rejection.INTERRUPTIBLE_PRICE_NOT_ON_DEMAND),
    ],
)
async def test_a_bad_interruptible_price_refuses_the_offer_with_its_reason(
    unit: MemoryPricingUnitOfWork,
    clock: ManualClock,
    submitted: OfferSubmitted,
    reason: Rejection,
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(submitted, clock))
    [status] = sent(unit, OFFERS_STATUS)
    assert (status.status, status.reason) == (OfferStatus.REJECTED, reason.value)
    assert sent(unit, PRICING_OFFERS) == []


async def test_a_change_may_add_or_move_the_interruptible_price(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(offer(), clock))
    await apply(
        unit, OFFERS_COMMANDS, command(change(interruptible_price_per_gpu_hour="0.30"), clock)
    )
    assert sent(unit, PRICING_OFFERS)[-1] == OfferAccepted(
        offer=two_price(second="0.30"), revision=2, changed=["interruptible_price_per_gpu_hour"]
    )
    # A new on-demand price and interruptible price together: held against the new one.
    both = change(price_per_gpu_hour="0.35", interruptible_price_per_gpu_hour="0.35")
    await apply(unit, OFFERS_COMMANDS, command(both, clock))
    repriced = two_price(second="0.35").model_copy(update={"price_per_gpu_hour": Decimal("0.35")})
    assert sent(unit, PRICING_OFFERS)[-1] == OfferAccepted(
        offer=repriced,
        revision=3,
        changed=["interruptible_price_per_gpu_hour", "price_per_gpu_hour"],
    )
    assert unit.state.offers["o1"].offer == repriced


@pytest.mark.parametrize(
    ("requested", "reason"),
    [
        # Above the offer's current on-demand price (0.40).
        (change(interruptible_price_per_gpu_hour="0.45"), "interruptible_price_above_on_demand"),
        # Above the on-demand price the same change sets.
        (
            change(price_per_gpu_hour="0.30", interruptible_price_per_gpu_hour="0.35"),
            "interruptible_price_above_on_demand",
        ),
        # An on-demand price below the interruptible price the offer holds (0.25).
        (change(price_per_gpu_hour="0.20"), "interruptible_price_above_on_demand"),
        (change(interruptible_price_per_gpu_hour="0.0001"), "interruptible_price_out_of_band"),
    ],
)
async def test_a_change_that_breaks_the_interruptible_rules_leaves_the_offer_as_it_was(
    unit: MemoryPricingUnitOfWork,
    clock: ManualClock,
    requested: OfferChangeRequested,
    reason: str,
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(two_price(), clock))
    event = command(requested, clock)
    await apply(unit, OFFERS_COMMANDS, event)
    last = unit.published[-1]
    assert last.envelope.event_id == stable_id(event.event_id, "change-refused")
    assert last.envelope.payload == offer_status("o1", OfferStatus.ACCEPTED, 4, reason=reason)
    assert len(sent(unit, PRICING_OFFERS)) == 1
    row = unit.state.offers["o1"]
    assert (row.revision, row.offer) == (1, two_price())


async def test_an_interruptible_offer_takes_no_interruptible_price(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    single = offer_submitted("o1", price="0.20", tier=Tier.INTERRUPTIBLE)
    await apply(unit, OFFERS_COMMANDS, command(single, clock))
    await apply(
        unit, OFFERS_COMMANDS, command(change(interruptible_price_per_gpu_hour="0.10"), clock)
    )
    assert unit.published[-1].envelope.payload == offer_status(
        "o1", OfferStatus.ACCEPTED, 4, reason=Rejection.INTERRUPTIBLE_PRICE_NOT_ON_DEMAND.value
    )
    assert unit.state.offers["o1"].offer == single
    # Its own price is still its to change.
    await apply(unit, OFFERS_COMMANDS, command(change(price_per_gpu_hour="0.18"), clock))
    assert sent(unit, PRICING_OFFERS)[-1].revision == 2


async def test_an_exhausted_offer_may_still_be_changed_and_withdrawn(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, command(two_price(), clock))
    exhausted = offer_status("o1", OfferStatus.EXHAUSTED, 0)
    await apply(unit, OFFERS_STATUS, wrap(exhausted, producer="matching", occurred_at=clock.now()))
    # Every GPU is leased: the offer is live again when a lease ends, so it stays open.
    await apply(unit, OFFERS_COMMANDS, command(change(gpus=6), clock))
    assert sent(unit, PRICING_OFFERS)[-1] == OfferAccepted(
        offer=two_price().model_copy(update={"gpus": 6}), revision=2, changed=["gpus"]
    )
    await withdraw_forwarded(unit, clock)


async def test_an_offers_provisioning_timeout_goes_to_the_book_unchanged_through_a_change(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    submitted = offer_submitted("o1", price="0.40", provisioning_timeout_seconds=900)
    ready = offer_submitted("o2", price="0.40")  # none stated: ready at the lease's start
    await apply(unit, OFFERS_COMMANDS, command(submitted, clock), command(ready, clock))
    await apply(unit, OFFERS_COMMANDS, command(change(price_per_gpu_hour=Decimal("0.35")), clock))
    accepted: list[OfferAccepted] = sent(unit, PRICING_OFFERS)
    assert [(a.offer.offer_id, a.revision) for a in accepted] == [("o1", 1), ("o2", 1), ("o1", 2)]
    assert [a.offer.provisioning_timeout_seconds for a in accepted] == [900, 0, 900]
    assert accepted[-1].offer.price_per_gpu_hour == Decimal("0.35")
