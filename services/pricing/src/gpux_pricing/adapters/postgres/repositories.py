"""Pricing's repositories on PostgreSQL: sellers, GPUs, FX rates, offers, book versions and
sellers' reliability."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal

import asyncpg

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted
from gpux_contracts.reliability import ReliabilityCounts
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.domain.market import BookKey, free_on_book, tiers_of
from gpux_pricing.domain.validation import SellerView
from gpux_pricing.service.unit_of_work import Decision, KnownOffer


class PostgresSellers:
    """``pricing.sellers``."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def upsert(self, account_id: str, status: AccountStatus, *, is_seller: bool) -> None:
        """Remember an account's latest status and roles."""
        await self._conn.execute(
            "INSERT INTO pricing.sellers (account_id, status, is_seller) VALUES ($1, $2, $3)"
            " ON CONFLICT (account_id) DO UPDATE SET status = EXCLUDED.status,"
            " is_seller = EXCLUDED.is_seller",
            account_id,
            status.value,
            is_seller,
        )

    async def get(self, account_id: str) -> SellerView | None:
        """What pricing knows of an account."""
        row = await self._conn.fetchrow(
            "SELECT status, is_seller FROM pricing.sellers WHERE account_id = $1", account_id
        )
        return SellerView(AccountStatus(row["status"]), row["is_seller"]) if row else None


class PostgresGpus:
    """``pricing.gpus``."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def upsert(self, gpu_id: str, name: str) -> None:
        """Remember a GPU model of the catalog."""
        await self._conn.execute(
            "INSERT INTO pricing.gpus (id, name) VALUES ($1, $2)"
            " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name",
            gpu_id,
            name,
        )

    async def known(self, gpu_id: str) -> bool:
        """Whether the catalog has this GPU model."""
        return bool(
            await self._conn.fetchval("SELECT true FROM pricing.gpus WHERE id = $1", gpu_id)
        )


class PostgresRates:
    """``pricing.fx_rates``; the table is read once per unit of work."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._table: RateTable | None = None

    async def upsert(self, rate: Rate) -> None:
        """Keep the newest rate per currency (``supersedes``: an equal time replaces it)."""
        self._table = None
        await self._conn.execute(
            "INSERT INTO pricing.fx_rates (base, quote, rate, as_of) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (base) DO UPDATE SET quote = EXCLUDED.quote, rate = EXCLUDED.rate,"
            " as_of = EXCLUDED.as_of WHERE pricing.fx_rates.as_of <= EXCLUDED.as_of",
            rate.base.value,
            rate.quote.value,
            rate.value,
            rate.as_of,
        )

    async def table(self) -> RateTable:
        """Every known rate into the reference currency."""
        if self._table is None:
            rows = await self._conn.fetch("SELECT base, quote, rate, as_of FROM pricing.fx_rates")
            self._table = RateTable.of(
                *(
                    Rate(Currency(r["base"]), Currency(r["quote"]), Decimal(r["rate"]), r["as_of"])
                    for r in rows
                )
            )
        return self._table


def _offer(body: str) -> OfferSubmitted:
    return OfferSubmitted.model_validate(json.loads(body))


class PostgresOffers:
    """``pricing.offers``: each offer's latest revision, decision and what the book holds."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def get(self, offer_id: str) -> KnownOffer | None:
        """An offer pricing validated, locked until the transaction ends."""
        row = await self._conn.fetchrow(
            "SELECT body, revision, status FROM pricing.offers WHERE offer_id = $1 FOR UPDATE",
            offer_id,
        )
        if row is None:
            return None
        return KnownOffer(_offer(row["body"]), row["revision"], OfferStatus(row["status"]))

    async def save(self, offer: OfferSubmitted, decision: Decision, now: datetime) -> None:
        """Record an offer's latest revision and pricing's decision on it."""
        await self._conn.execute(
            "INSERT INTO pricing.offers (offer_id, seller_id, gpu, revision, status, reason,"
            " body, updated_at, interruptible_price, interruption_notice_seconds, tiers)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)"
            " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision,"
            " status = EXCLUDED.status, reason = EXCLUDED.reason, body = EXCLUDED.body,"
            " updated_at = EXCLUDED.updated_at,"
            " interruptible_price = EXCLUDED.interruptible_price,"
            " interruption_notice_seconds = EXCLUDED.interruption_notice_seconds,"
            " tiers = EXCLUDED.tiers",
            offer.offer_id,
            offer.seller_id,
            offer.gpu,
            decision.revision,
            decision.status.value,
            decision.reason,
            offer.model_dump_json(),
            now,
            offer.interruptible_price_per_gpu_hour,
            offer.interruption_notice_seconds,
            list(tiers_of(offer)),
        )

    async def set_book_state(
        self, offer_id: str, status: OfferStatus, remaining: int, now: datetime
    ) -> OfferSubmitted | None:
        """Record what the book says of an offer; returns its latest body, None if unknown."""
        row = await self._conn.fetchrow(
            "UPDATE pricing.offers SET status = $2, remaining = $3, on_book = $4,"
            " updated_at = $5 WHERE offer_id = $1 RETURNING body",
            offer_id,
            status.value,
            remaining,
            free_on_book(status, remaining) > 0,
            now,
        )
        return _offer(row["body"]) if row else None

    async def on_book(self, gpu: str, tier: str) -> list[tuple[OfferSubmitted, int]]:
        """The offers sold in one book that the book holds, with their free GPUs."""
        rows = await self._conn.fetch(
            "SELECT body, remaining FROM pricing.offers"
            " WHERE gpu = $1 AND $2 = ANY(tiers) AND on_book ORDER BY offer_id",
            gpu,
            tier,
        )
        return [(_offer(r["body"]), r["remaining"]) for r in rows]

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that ever had an offer sold in it that was not rejected."""
        rows = await self._conn.fetch(
            "SELECT DISTINCT gpu, unnest(tiers) AS tier FROM pricing.offers"
            " WHERE status <> 'rejected' ORDER BY gpu, tier"
        )
        return [(r["gpu"], r["tier"]) for r in rows]

    async def books_of_sellers(self, seller_ids: Sequence[str]) -> dict[str, list[BookKey]]:
        """The books each of these sellers has an open offer in, in key order (one query)."""
        if not seller_ids:
            return {}
        rows = await self._conn.fetch(
            "SELECT DISTINCT seller_id, gpu, unnest(tiers) AS tier FROM pricing.offers"
            # The predicate of the index offers_open_by_seller, word for word.
            " WHERE seller_id = ANY($1::text[])"
            " AND status NOT IN ('rejected', 'withdrawn', 'expired')"
            " ORDER BY seller_id, gpu, tier",
            list(seller_ids),
        )
        books: dict[str, list[BookKey]] = {}
        for r in rows:
            books.setdefault(r["seller_id"], []).append((r["gpu"], r["tier"]))
        return books


class PostgresReliability:
    """``pricing.seller_reliability``."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def keep(self, counts: Mapping[str, ReliabilityCounts]) -> set[str]:
        """Keep each seller's counts unless larger ones are held, in one statement; the
        sellers whose held counts changed."""
        if not counts:
            return set()
        # In key order, so two instances keeping the same sellers never lock them crosswise.
        ordered = sorted(counts.items())
        rows = await self._conn.fetch(
            "INSERT INTO pricing.seller_reliability AS held"
            " (seller_id, ready_in_time, failed, reclaimed)"
            " SELECT s, r, f, c FROM unnest($1::text[], $2::bigint[], $3::bigint[],"
            " $4::bigint[]) AS n(s, r, f, c) ORDER BY s"
            " ON CONFLICT (seller_id) DO UPDATE SET ready_in_time = EXCLUDED.ready_in_time,"
            " failed = EXCLUDED.failed, reclaimed = EXCLUDED.reclaimed"
            # supersedes: a total at least the held one replaces it (the same counts change
            # nothing, so they are not reported as changed).
            " WHERE EXCLUDED.ready_in_time + EXCLUDED.failed + EXCLUDED.reclaimed"
            " >= held.ready_in_time + held.failed + held.reclaimed"
            " AND (EXCLUDED.ready_in_time, EXCLUDED.failed, EXCLUDED.reclaimed)"
            " IS DISTINCT FROM (held.ready_in_time, held.failed, held.reclaimed)"
            " RETURNING seller_id",
            [s for s, _ in ordered],
            [c.ready_in_time for _, c in ordered],
            [c.failed for _, c in ordered],
            [c.reclaimed for _, c in ordered],
        )
        return {r["seller_id"] for r in rows}

    async def of(self, seller_ids: Sequence[str]) -> dict[str, ReliabilityCounts]:
        """The counts held of these sellers (one query)."""
        if not seller_ids:
            return {}
        rows = await self._conn.fetch(
            "SELECT seller_id, ready_in_time, failed, reclaimed FROM pricing.seller_reliability"
            " WHERE seller_id = ANY($1::text[])",
            list(seller_ids),
        )
        return {
            r["seller_id"]: ReliabilityCounts(
                ready_in_time=r["ready_in_time"], failed=r["failed"], reclaimed=r["reclaimed"]
            )
            for r in rows
        }


class PostgresBookVersions:
    """``pricing.book_versions``."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def get(self, book: BookKey) -> int:
        """The book's version (0 before its first change)."""
        version = await self._conn.fetchval(
            "SELECT version FROM pricing.book_versions WHERE gpu = $1 AND tier = $2", *book
        )
        return int(version or 0)

    async def bump(self, books: Sequence[BookKey]) -> dict[BookKey, int]:
        """Move each book's version on by one, in one statement (rows locked till commit)."""
        if not books:
            return {}
        # In key order, so two instances bumping the same books never lock them crosswise.
        ordered = sorted(set(books))
        rows = await self._conn.fetch(
            "INSERT INTO pricing.book_versions (gpu, tier, version)"
            " SELECT g, t, 1 FROM unnest($1::text[], $2::text[]) AS b(g, t) ORDER BY g, t"
            " ON CONFLICT (gpu, tier) DO UPDATE SET version = book_versions.version + 1"
            " RETURNING gpu, tier, version",
            [g for g, _ in ordered],
            [t for _, t in ordered],
        )
        return {(r["gpu"], r["tier"]): int(r["version"]) for r in rows}
