"""Request and response bodies of the admin's routes: account credits and FX rates."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, StringConstraints

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import REFERENCE_CURRENCY, Currency, DecimalAmount
from gpux_gateway.entrypoints.schemas import PRINTABLE, CreditAmount, Strict, examples


class CreditIn(Strict):
    """An admin credit to an account's wallet."""

    model_config = examples(
        {"amount": "50.00", "currency": "EUR", "reference": "goodwill credit, ticket 4711"}
    )

    amount: CreditAmount
    currency: Currency
    reference: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=PRINTABLE)]


class CreditAccepted(BaseModel):
    """A credit command that billing will book."""

    model_config = examples(
        {
            "credit_id": "01JWQY9QTGK7NPTTT0223ZQEDG",
            "account_id": "01JWQXXABRF8P0H4WB1N5VPJMS",
            "amount": "50.00",
            "currency": "EUR",
            "status": "requested",
        }
    )

    credit_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    status: str = "requested"


# A positive decimal below one million with at most 10 decimals (the precision of the rates
# pricing derives from the ECB's): the fraction of a rate below 1 has k leading zeros, then a
# non-zero digit, then at most 9 - k digits.
_BELOW_ONE = "|".join(f"{'0' * k}[1-9][0-9]{{0,{9 - k}}}" for k in range(10))
RATE_PATTERN = rf"^([1-9][0-9]{{0,5}}(\.[0-9]{{1,10}})?|0\.({_BELOW_ONE}))$"


def _plain_decimal(value: Any) -> Any:
    # The pattern is the rule, not only its documentation: "1e3" or "0.92 " is refused.
    if not isinstance(value, str) or re.fullmatch(RATE_PATTERN, value) is None:
        raise ValueError("a rate is a decimal string above 0, below 1000000, at most 10 decimals")
    return value


FxRate = Annotated[
    DecimalAmount,
    BeforeValidator(_plain_decimal),
    Field(
        json_schema_extra={"pattern": RATE_PATTERN, "examples": ["0.92", "1.1800106201"]},
    ),
]
"""Units of the reference currency (EUR) one unit of a currency buys."""


def _not_the_reference(currency: Currency) -> Currency:
    if currency is REFERENCE_CURRENCY:
        raise ValueError(f"{REFERENCE_CURRENCY} is the reference currency: its rate is always 1")
    return currency


class FxRateIn(Strict):
    """A rate the admin publishes (the source is down or wrong): 1 `base` buys `rate` EUR."""

    model_config = examples({"base": "USD", "rate": "0.8765", "reason": "ECB feed delayed"})

    base: Annotated[Currency, AfterValidator(_not_the_reference)] = Field(
        description="The currency the rate is for; any but the reference currency (EUR)."
    )
    rate: FxRate
    reason: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=180, pattern=PRINTABLE),
    ] = Field(description="Why the admin publishes it: kept in the rate's `source`, audited.")


class FxRateAccepted(RatePublished):
    """A rate on its way to `fx.rates`, as of now: it stands until a newer one (the source's
    next rate) replaces it."""

    model_config = examples(
        {
            "base": "USD",
            "quote": "EUR",
            "rate": "0.8765",
            "as_of": "2025-06-02T09:07:23Z",
            "source": "admin: ECB feed delayed",
            "rate_id": "01JWQYAVYRNNRF9HSH96PB4WHW",
            "status": "requested",
        }
    )

    rate_id: str = Field(description="The event's id (from the Idempotency-Key if sent).")
    status: str = "requested"
