"""A batch's order funding: what its orders are held from, read once, decided one by one (pure).

A unit of work funds a batch of ``order.placed`` (or releases a batch of final statuses, or
takes a batch of trades' shares of their holds into their leases) from what it read once for
the whole batch: the holds already placed for its orders, its wallets' available balances
(locked for the unit, so nothing else changes them before it commits), the FX rates and the
best asks its market orders are priced at. ``Funding`` decides each order in turn against
those figures and keeps them up to date with every decision (a placed hold takes from the
wallet's available balance and is seen by a later copy of the same order and by its fills; a
release gives back), so the batch's outcomes are those of the orders posted one after the
other. The
decision applies the ledger's own rules: the transfer is built by ``transfers.hold`` (a
refused build answers with its reason) and checked against the floors by
``posting.first_shortfall``, the rule the ledger enforces when it posts the batch (and
PostgreSQL's trigger after it: were they ever to disagree, the post fails and the batch is
split, never half-funded).

Reasons, in order of precedence: ``price_required`` (a limit order without a price),
``no_offers`` (a market order without a cap and nothing to take), ``fx_rate_missing``,
``fx_rate_stale``, a ledger reason of the hold's transfer (``amount_not_positive``...), then
``insufficient_funds`` with the shortfall in the wallet's currency.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

from gpux_billing.domain import holds, transfers
from gpux_billing.domain.amounts import convert
from gpux_billing.domain.fx import NoRate, ToReference, cross
from gpux_billing.domain.holds import Ask, Hold, HoldPolicy
from gpux_billing.domain.ledger import AccountKey, AccountKind, LedgerError, Transfer, Wallet
from gpux_billing.domain.posting import first_shortfall, net_changes
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, OrderType


def wallet_of(order: OrderPlaced) -> Wallet:
    """The wallet an order is held from (its buyer's, in the wallet's currency)."""
    return order.buyer_id, order.wallet_currency or order.currency


def ask_of(order: OrderPlaced) -> Ask | None:
    """The best ask an order's hold is priced at (None: it has a price of its own, or none)."""
    if order.max_price_per_gpu_hour is not None or order.type is not OrderType.MARKET:
        return None
    return order.gpu, order.tier, order.region, order.currency


def converts(order: OrderPlaced) -> bool:
    """Whether the order is held in another currency than its own (it needs the rates)."""
    return wallet_of(order)[1] is not order.currency


@dataclass(frozen=True, slots=True)
class Funded:
    """An order held: the hold, the price its book applies, and the transfer to post."""

    hold: Hold
    price: Decimal
    transfer: Transfer


@dataclass(frozen=True, slots=True)
class Refused:
    """An order that cannot be held, why, and (insufficient funds) by how much, in the wallet's
    currency."""

    reason: str
    shortfall: tuple[int, Currency] | None = None


@dataclass(frozen=True, slots=True)
class Released:
    """What a final status gives back of its order's hold: the transfer, and the hold before."""

    hold: Hold
    amount_micros: int
    transfer: Transfer


@dataclass
class Funding:
    """What a batch's orders are funded from, as the unit read it and its decisions left it."""

    holds: dict[str, Hold] = field(default_factory=dict)
    """The known holds by order id: read for the unit or placed by it (released ones too)."""
    looked_up: set[str] = field(default_factory=set)
    """Order ids whose hold was read (not in ``holds``: the order has none)."""
    available: dict[Wallet, int] = field(default_factory=dict)
    """The locked wallets' available balances in micro-units, after the unit's decisions."""
    rates: dict[Currency, ToReference] | None = None
    """The FX rates into the reference currency (None: not read, no order needed them)."""
    asks: dict[Ask, Decimal | None] = field(default_factory=dict)
    """The best ask per GPU-hour of each market order's book (None: nothing offered)."""

    def learn_holds(self, order_ids: set[str], found: dict[str, Hold]) -> None:
        """Remember what was read of these orders' holds."""
        self.looked_up |= order_ids
        self.holds.update(found)

    def place(
        self, order: OrderPlaced, at: datetime, now: datetime, policy: HoldPolicy
    ) -> Funded | Refused | None:
        """Decide an order: held (and taken from its wallet), refused, or None when it is held
        already (the same order again)."""
        if order.order_id in self.holds:
            return None
        price = self._price(order, policy)
        if isinstance(price, str):
            return Refused(price)
        amount = self._in_wallet(order, holds.first_period_micros(price, order.gpus), now, policy)
        if isinstance(amount, str):
            return Refused(amount)
        wallet = wallet_of(order)
        try:
            transfer = transfers.hold(
                f"hold:{order.order_id}",
                order.buyer_id,
                wallet[1],
                amount,
                at,
                reference=f"order {order.order_id}"[:200],
            )
        except LedgerError as exc:
            return Refused(exc.reason.value)
        available = self.available.get(wallet, 0)
        floors = {AccountKey(*wallet, AccountKind.AVAILABLE): available}
        short = first_shortfall(floors, net_changes([transfer]))
        if short is not None:
            return Refused("insufficient_funds", (short.shortfall_micros, wallet[1]))
        self.available[wallet] = available - amount
        hold = Hold(order.order_id, order.buyer_id, order.gpu, order.gpus, wallet[1], amount)
        self.holds[order.order_id] = hold
        return Funded(hold, price, transfer)

    def release(self, change: OrderStatusChanged, at: datetime) -> Released | None:
        """What a final status releases of its order's hold (once), or None: never funded
        (billing rejected it), released already, or nothing left unfilled."""
        hold = self.holds.get(change.order_id)
        if hold is None or hold.released_micros > 0:
            return None
        amount = holds.unfilled_micros(hold, change.filled_gpus)
        if amount == 0:
            return None
        transfer = transfers.release(
            f"release:{hold.order_id}",
            hold.buyer_id,
            hold.currency,
            amount,
            at,
            reference=f"order {hold.order_id} {change.status.value}"[:200],
        )
        self.holds[hold.order_id] = replace(hold, released_micros=hold.released_micros + amount)
        wallet = (hold.buyer_id, hold.currency)
        if wallet in self.available:
            self.available[wallet] += amount
        return Released(hold, amount, transfer)

    def lease(self, order_id: str, gpus: int) -> tuple[Hold, int] | None:
        """A fill of ``gpus`` takes its share of its order's hold into its lease: the hold
        after it and the share in micro-units (None: billing knows no hold of the order)."""
        hold = self.holds.get(order_id)
        if hold is None:
            return None
        leased_gpus, share = holds.lease_share(hold, gpus)
        after = replace(hold, leased_gpus=leased_gpus)
        self.holds[order_id] = after
        return after, share

    def _price(self, order: OrderPlaced, policy: HoldPolicy) -> Decimal | str:
        """The price per GPU-hour the order holds at, in its currency, or why it cannot be."""
        if order.max_price_per_gpu_hour is not None:
            return order.max_price_per_gpu_hour
        ask = ask_of(order)
        if ask is None:
            return "price_required"
        best = self.asks.get(ask)
        if best is None:
            return "no_offers"  # nothing to take, so nothing to measure the slippage from
        return holds.market_cap(best, policy.slippage_bps)

    def _in_wallet(
        self, order: OrderPlaced, amount: int, now: datetime, policy: HoldPolicy
    ) -> int | str:
        """An amount of the order's currency in its wallet's, at the current rate (or why not)."""
        if not converts(order):
            return amount
        try:
            rate, rate_at = cross(self.rates or {}, order.currency, wallet_of(order)[1])
        except NoRate:
            return "fx_rate_missing"
        if holds.stale(rate_at, now, policy):
            return "fx_rate_stale"
        return convert(amount, rate)
