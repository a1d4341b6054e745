"""Settings of the billing service."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Literal

from pydantic import Field

from gpux_billing.domain.holds import HoldPolicy
from gpux_billing.domain.leases import Policy
from gpux_billing.domain.rules import Rules
from gpux_contracts.money import quantize, to_micros
from gpux_contracts.payouts import DEFAULT_MINIMUM
from gpux_platform.settings import GpuxSettings


class BillingSettings(GpuxSettings):
    """Everything the billing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8104, ge=0, le=65535)
    dev_topups: bool = Field(
        default=False,
        description="Accept the `dev` top-up provider, which confirms at once (local demo only).",
    )
    fee_bps: int = Field(
        default=1000, ge=0, le=10_000, description="Platform fee per charge, in basis points."
    )
    payout_minimum: Decimal = Field(
        default=Decimal(DEFAULT_MINIMUM),
        ge=0,
        le=Decimal(1_000_000_000),
        description="The smallest payout a seller may ask for, the same number in every currency.",
    )
    runway_s: int = Field(
        default=3600,
        ge=0,
        description="Warn a buyer (`lease.low_balance`) when its wallet lasts less than this.",
    )
    settle_every_s: int = Field(
        default=60, ge=1, le=3600, description="Settlement period of per-second leases."
    )
    settle_tick_s: float = Field(
        default=1.0, gt=0, le=60, description="How often billing looks for leases due."
    )
    settle_batch: int = Field(
        default=5000, ge=1, le=100_000, description="Most leases settled in one transaction."
    )
    read_models_check_s: float = Field(
        default=1.0,
        gt=0,
        description="How often billing checks that Redis still holds the balances (no refresh"
        " failed, Redis did not restart empty) and rebuilds them from the ledger if not.",
    )
    settlement_events: Literal["batched", "per_lease"] = Field(
        default="batched",
        description="How the settlement loop announces charges: `batched` (one `leases.settled`"
        " and `ledger.batch_posted` per chunk of a batch) or `per_lease` (one `lease.charged` and"
        " `ledger.posted` per charge, as before; for a rolling upgrade, gateway first).",
    )
    market_slippage_bps: int = Field(
        default=500,
        ge=0,
        le=10_000,
        description="A market order without a cap is held, and capped, at the best ask plus this.",
    )
    fx_max_age_s: int = Field(
        default=7 * 24 * 3600,
        gt=0,
        description="A rate older than this funds no hold in another currency (stale).",
    )

    def rules(self) -> Rules:
        """The rules these settings configure, as the handlers take them."""
        return Rules(
            lease=Policy(
                fee_bps=self.fee_bps,
                runway_s=self.runway_s,
                batched_events=self.settlement_events == "batched",
            ),
            hold=HoldPolicy(self.market_slippage_bps, timedelta(seconds=self.fx_max_age_s)),
            settle_every_s=self.settle_every_s,
            dev_topups=self.dev_topups,
            payout_minimum_micros=to_micros(quantize(self.payout_minimum)),
        )
