"""Posting to the ledger from a handler, and announcing what it did.

Every new transfer gets one ``ledger.posted`` (``billing.ledger``), or, from the settlement
loop, a place in a ``ledger.batch_posted`` of up to ``MAX_ITEMS`` transfers; every wallet a
handler changed gets one ``balance.changed`` (``billing.balances``), read after the posting
in the same unit, and is marked touched so the Redis read model follows the commit. Ledger
transfers take the causing event's time, so handling the same command again (a crash before
the commit) builds the identical transfer, which the ledger takes as a replay.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from gpux_billing.domain.ledger import Transfer, Wallet
from gpux_billing.service.events import outgoing
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.billing import BalanceChanged
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LedgerPosted
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.settlement import MAX_ITEMS, LedgerBatchPosted
from gpux_contracts.topics import BILLING_BALANCES, BILLING_LEDGER
from gpux_platform.broker import Outgoing

T = TypeVar("T")


@functools.lru_cache(maxsize=1 << 16)
def money(micros: int) -> Decimal:
    """Micro-units as an event's decimal amount (cached: the same amounts recur)."""
    return canonical(from_micros(micros))


def chunks(items: Sequence[T], size: int = MAX_ITEMS) -> Iterator[Sequence[T]]:
    """``items`` in runs of at most ``size``, in order (an aggregated event's items)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def posted_item(transfer: Transfer) -> dict[str, Any]:
    """A transfer as ``ledger.posted`` carries it (its entries on accounts' own balances), as
    plain data: the event's model validates a whole chunk of them at once."""
    fx = transfer.fx
    return {
        "transfer_id": transfer.id,
        "kind": transfer.kind.value,
        "created_at": transfer.created_at,
        "reference": transfer.reference,
        "fx_rate": None if fx is None else fx.rate,
        "fx_base": None if fx is None else fx.base,
        "fx_quote": None if fx is None else fx.quote,
        "fx_rate_at": None if fx is None else fx.rate_at,
        "lines": [
            {
                "owner": e.account.owner,
                "currency": e.account.currency,
                "kind": e.account.kind.value,
                "amount": money(e.amount_micros),
            }
            for e in transfer.entries
            if not e.account.kind.platform_owned
        ],
    }


def ledger_posted(transfer: Transfer, cause: Envelope[Any] | None, now: datetime) -> Outgoing:
    """The ``ledger.posted`` event of a transfer: its entries on accounts' own balances."""
    payload = LedgerPosted.model_validate(posted_item(transfer))
    event_id = stable_id("ledger", transfer.id)
    return outgoing(BILLING_LEDGER, transfer.id, payload, cause=cause, event_id=event_id, now=now)


def ledger_batches(
    transfers: Sequence[Transfer], cause: Envelope[Any] | None, now: datetime
) -> list[Outgoing]:
    """The ``ledger.batch_posted`` events of transfers, ``MAX_ITEMS`` a piece.

    Keyed and named by the chunk's first transfer, which is announced once ever (only a new
    transfer is announced), so the id is stable and never shared.
    """
    events = []
    for chunk in chunks(transfers):
        payload = LedgerBatchPosted.model_validate({"transfers": [posted_item(t) for t in chunk]})
        first = chunk[0].id
        event_id = stable_id("ledger", "batch", first)
        events.append(
            outgoing(BILLING_LEDGER, first, payload, cause=cause, event_id=event_id, now=now)
        )
    return events


async def post(
    uow: BillingUnitOfWork,
    transfers: Sequence[Transfer],
    cause: Envelope[Any] | None,
    *,
    isolated: bool = False,
    batched: bool = False,
) -> None:
    """Post transfers (one statement) and queue a ``ledger.posted`` for each new one.

    ``isolated``: a refusal leaves the unit usable (the caller answers it instead).
    ``batched``: announce the new ones in ``ledger.batch_posted`` events instead.
    """
    if not batched:
        await post_each(uow, [(t, cause) for t in transfers], isolated=isolated)
        return
    posted = await uow.ledger.post_many(transfers, isolated=isolated)
    uow.outbox.add(*ledger_batches([p.transfer for p in posted if not p.replayed], cause, uow.now))


async def post_each(
    uow: BillingUnitOfWork,
    transfers: Sequence[tuple[Transfer, Envelope[Any] | None]],
    *,
    isolated: bool = False,
) -> None:
    """Post transfers, each with the event that caused it (one statement), and queue a
    ``ledger.posted`` for each new one in the trace of its cause."""
    posted = await uow.ledger.post_many([t for t, _ in transfers], isolated=isolated)
    uow.outbox.add(
        *(
            ledger_posted(p.transfer, cause, uow.now)
            for p, (_, cause) in zip(posted, transfers, strict=True)
            if not p.replayed
        )
    )


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
    wallets: Mapping[Wallet, Envelope[Any] | None],
    extra: Sequence[Outgoing] = (),
) -> None:
    """Queue ``extra`` and a ``balance.changed`` per wallet (one read for all), each in the
    trace of the event that last changed it (None: the settlement loop's tick); mark the
    wallets touched."""
    # Read after posting: the ledger's trigger locks the touched accounts until commit, so a
    # later transaction's balance event is also later in the outbox.
    messages = list(extra)
    now = uow.now
    found = await uow.ledger.wallet_balances(sorted(wallets)) if wallets else {}
    for wallet, (available, held) in found.items():
        account_id, currency = wallet
        cause = wallets[wallet]
        origin = "tick" if cause is None else cause.event_id
        event_id = stable_id(origin, "balance", account_id, currency.value, now.isoformat())
        payload = balance_changed(wallet, available, held, now)
        key = balance_key(account_id, currency)
        messages.append(
            outgoing(BILLING_BALANCES, key, payload, cause=cause, event_id=event_id, now=now)
        )
    uow.outbox.add(*messages)
    uow.touched.update(wallets)
