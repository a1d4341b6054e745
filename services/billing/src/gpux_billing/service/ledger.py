"""Posting to the ledger from a handler, and announcing what it did.

Every new transfer gets one ``ledger.posted`` (``billing.ledger``); every wallet a handler
changed gets one ``balance.changed`` (``billing.balances``), read after the posting in the
same unit, and is marked touched so the Redis read model follows the commit. Ledger
transfers take the causing event's time, so handling the same command again (a crash before
the commit) builds the identical transfer, which the ledger takes as a replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from gpux_billing.domain.ledger import Transfer, Wallet
from gpux_billing.service.events import outgoing
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.billing import BalanceChanged
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LedgerLine, LedgerPosted
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.topics import BILLING_BALANCES, BILLING_LEDGER
from gpux_platform.broker import Outgoing


def ledger_posted(transfer: Transfer, cause: Envelope[Any] | None, now: datetime) -> Outgoing:
    """The ``ledger.posted`` event of a transfer: its entries on accounts' own balances."""
    fx = transfer.fx
    payload = LedgerPosted(
        transfer_id=transfer.id,
        kind=transfer.kind.value,
        created_at=transfer.created_at,
        reference=transfer.reference,
        fx_rate=None if fx is None else fx.rate,
        fx_base=None if fx is None else fx.base,
        fx_quote=None if fx is None else fx.quote,
        fx_rate_at=None if fx is None else fx.rate_at,
        lines=[
            LedgerLine(
                owner=e.account.owner,
                currency=e.account.currency,
                kind=e.account.kind.value,
                amount=canonical(from_micros(e.amount_micros)),
            )
            for e in transfer.entries
            if not e.account.kind.platform_owned
        ],
    )
    event_id = stable_id("ledger", transfer.id)
    return outgoing(BILLING_LEDGER, transfer.id, payload, cause=cause, event_id=event_id, now=now)


async def post(
    uow: BillingUnitOfWork,
    transfers: Sequence[Transfer],
    cause: Envelope[Any] | None,
    *,
    isolated: bool = False,
) -> None:
    """Post transfers (one statement) and queue a ``ledger.posted`` for each new one.

    ``isolated``: a refusal leaves the unit usable (the caller answers it instead).
    """
    posted = await uow.ledger.post_many(transfers, isolated=isolated)
    uow.outbox.add(*(ledger_posted(p.transfer, cause, uow.now) for p in posted if not p.replayed))


def balance_changed(
    wallet: Wallet, available_micros: int, held_micros: int, as_of: datetime
) -> BalanceChanged:
    """A wallet's balances as the contract carries them (also the Redis read model's value)."""
    account_id, currency = wallet
    return BalanceChanged(
        account_id=account_id,
        currency=currency,
        available=canonical(from_micros(available_micros)),
        held=canonical(from_micros(held_micros)),
        as_of=as_of,
    )


def balance_key(account_id: str, currency: Currency) -> str:
    """The compacted ``billing.balances`` key of a wallet."""
    return f"{account_id}|{currency.value}"


async def announce(
    uow: BillingUnitOfWork,
    cause: Envelope[Any] | None,
    wallets: Iterable[Wallet],
    extra: Sequence[Outgoing] = (),
) -> None:
    """Queue ``extra`` and a ``balance.changed`` per wallet; mark the wallets touched."""
    # Read after posting: the ledger's trigger locks the touched accounts until commit, so a
    # later transaction's balance event is also later in the outbox.
    unique = sorted(set(wallets))
    messages = list(extra)
    now = uow.now
    origin = "tick" if cause is None else cause.event_id
    found = await uow.ledger.wallet_balances(unique) if unique else {}
    for wallet, (available, held) in found.items():
        account_id, currency = wallet
        event_id = stable_id(origin, "balance", account_id, currency.value, now.isoformat())
        payload = balance_changed(wallet, available, held, now)
        key = balance_key(account_id, currency)
        messages.append(
            outgoing(BILLING_BALANCES, key, payload, cause=cause, event_id=event_id, now=now)
        )
    uow.outbox.add(*messages)
    uow.touched.update(unique)
