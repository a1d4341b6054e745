"""All of pricing's SQL: sellers, GPUs, FX rates and validated offers."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

import asyncpg

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.domain.validation import SellerView


async def upsert_seller(
    conn: asyncpg.Connection, account_id: str, status: AccountStatus, is_seller: bool
) -> None:
    """Remember an account's latest status and roles."""
    await conn.execute(
        "INSERT INTO pricing.sellers (account_id, status, is_seller) VALUES ($1, $2, $3)"
        " ON CONFLICT (account_id) DO UPDATE SET status = EXCLUDED.status,"
        " is_seller = EXCLUDED.is_seller",
        account_id,
        status.value,
        is_seller,
    )


async def seller(conn: asyncpg.Connection, account_id: str) -> SellerView | None:
    """What pricing knows of an account."""
    row = await conn.fetchrow(
        "SELECT status, is_seller FROM pricing.sellers WHERE account_id = $1", account_id
    )
    return SellerView(AccountStatus(row["status"]), row["is_seller"]) if row else None


async def upsert_gpu(conn: asyncpg.Connection, gpu_id: str, name: str) -> None:
    """Remember a GPU model of the catalog."""
    await conn.execute(
        "INSERT INTO pricing.gpus (id, name) VALUES ($1, $2)"
        " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name",
        gpu_id,
        name,
    )


async def gpu_known(conn: asyncpg.Connection, gpu_id: str) -> bool:
    """Whether the catalog has this GPU model."""
    return bool(await conn.fetchval("SELECT true FROM pricing.gpus WHERE id = $1", gpu_id))


async def upsert_rate(conn: asyncpg.Connection, rate: Rate) -> None:
    """Keep the newest rate per currency (an older one never replaces it)."""
    await conn.execute(
        "INSERT INTO pricing.fx_rates (base, quote, rate, as_of) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (base) DO UPDATE SET quote = EXCLUDED.quote, rate = EXCLUDED.rate,"
        " as_of = EXCLUDED.as_of WHERE pricing.fx_rates.as_of <= EXCLUDED.as_of",
        rate.base.value,
        rate.quote.value,
        rate.value,
        rate.as_of,
    )


async def rate_table(conn: asyncpg.Connection) -> RateTable:
    """Every known rate into the reference currency."""
    rows = await conn.fetch("SELECT base, quote, rate, as_of FROM pricing.fx_rates")
    return RateTable.of(
        *(
            Rate(Currency(r["base"]), Currency(r["quote"]), Decimal(r["rate"]), r["as_of"])
            for r in rows
        )
    )


async def save_offer(
    conn: asyncpg.Connection,
    offer: OfferSubmitted,
    revision: int,
    status: OfferStatus,
    reason: str | None,
    now: datetime,
) -> None:
    """Record an offer's latest revision and pricing's decision on it."""
    await conn.execute(
        "INSERT INTO pricing.offers (offer_id, seller_id, gpu, revision, status, reason, body,"
        " updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)"
        " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision,"
        " status = EXCLUDED.status, reason = EXCLUDED.reason, body = EXCLUDED.body,"
        " updated_at = EXCLUDED.updated_at",
        offer.offer_id,
        offer.seller_id,
        offer.gpu,
        revision,
        status.value,
        reason,
        offer.model_dump_json(),
        now,
    )


async def offer(
    conn: asyncpg.Connection, offer_id: str
) -> tuple[OfferSubmitted, int, OfferStatus] | None:
    """An offer pricing validated: its latest body, revision and status."""
    row = await conn.fetchrow(
        "SELECT body, revision, status FROM pricing.offers WHERE offer_id = $1 FOR UPDATE",
        offer_id,
    )
    if row is None:
        return None
    body = OfferSubmitted.model_validate(json.loads(row["body"]))
    return body, row["revision"], OfferStatus(row["status"])


async def set_book_state(
    conn: asyncpg.Connection, offer_id: str, status: OfferStatus, remaining: int, now: datetime
) -> tuple[str, str] | None:
    """Record what the book says of an offer; returns its (gpu, tier), or None if unknown."""
    row = await conn.fetchrow(
        "UPDATE pricing.offers SET status = $2, remaining = $3, on_book = $4, updated_at = $5"
        " WHERE offer_id = $1 RETURNING gpu, body->>'tier' AS tier",
        offer_id,
        status.value,
        remaining,
        status is OfferStatus.LIVE and remaining > 0,
        now,
    )
    return (row["gpu"], row["tier"]) if row else None


async def live_offers(
    conn: asyncpg.Connection | asyncpg.Pool, gpu: str, tier: str
) -> list[tuple[OfferSubmitted, int]]:
    """The offers of one book that the book holds, with their remaining GPUs."""
    rows = await conn.fetch(
        "SELECT body, remaining FROM pricing.offers"
        " WHERE gpu = $1 AND body->>'tier' = $2 AND on_book ORDER BY offer_id",
        gpu,
        tier,
    )
    return [(OfferSubmitted.model_validate(json.loads(r["body"])), r["remaining"]) for r in rows]


async def books(conn: asyncpg.Connection | asyncpg.Pool) -> list[tuple[str, str]]:
    """Every (gpu, tier) that ever had an offer on the book."""
    rows = await conn.fetch(
        "SELECT DISTINCT gpu, body->>'tier' AS tier FROM pricing.offers WHERE status <> 'rejected'"
    )
    return [(r["gpu"], r["tier"]) for r in rows]
