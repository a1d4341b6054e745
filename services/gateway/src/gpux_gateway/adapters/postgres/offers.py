"""The offers table: the sellers' view of their offers."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from gpux_contracts.money import to_micros
from gpux_contracts.offers import OfferAccepted, OfferStatusChanged, OfferSubmitted
from gpux_gateway.adapters.postgres.deferred import DeferredRepository
from gpux_gateway.adapters.postgres.repository import OwnedTable
from gpux_gateway.domain.offers import CLOSED, ON_BOOK
from gpux_gateway.offers.repository import OfferRow

# domain.offers.after_report, set-based: a closed offer stays closed, nothing goes back to
# pending, pricing's `accepted` leaves an offer on the book as the book reported it (its reason
# shows); the capacity and leased GPUs of a report without them ($8, $9 null) stay as shown.
APPLY_STATUS = (
    "UPDATE gateway.offers SET"
    " status = CASE WHEN status = ANY($10::text[]) AND $3 = 'accepted' THEN status ELSE $3 END,"
    " remaining_gpus = CASE WHEN status = ANY($10::text[]) AND $3 = 'accepted'"
    " THEN remaining_gpus ELSE $5 END,"
    " capacity_gpus = coalesce($8, capacity_gpus), leased_gpus = coalesce($9, leased_gpus),"
    " reason = $4, updated_at = $6"
    " WHERE id = $1 AND seller_id = $2 AND status <> ALL($7::text[]) AND $3 <> 'pending'"
)
# domain.offers.change_applies: a later revision, on an offer still open.
APPLY_ACCEPTED = (
    "UPDATE gateway.offers SET price_micros = $3, gpus = $4, revision = $5, updated_at = $6,"
    " interruptible_price_micros = $8, interruption_notice_seconds = $9"
    " WHERE id = $1 AND seller_id = $2 AND revision < $5 AND status <> ALL($7::text[])"
)

OFFERS = OwnedTable("gateway.offers", "seller_id", lambda row: OfferRow(**dict(row)))


def _micros(price: Decimal | None) -> int | None:
    return None if price is None else to_micros(price)


class PostgresOffers(DeferredRepository):
    """Offers in ``gateway.offers``; status reports are deferred to the commit."""

    async def add(self, offer: OfferSubmitted, now: datetime) -> OfferRow:
        """Store the seller's view of a submitted offer (status pending)."""
        row = await self._conn.fetchrow(
            "INSERT INTO gateway.offers (id, seller_id, gpu, gpus, remaining_gpus, price_micros,"
            " currency, tier, billing, region, min_hours, available_until, status, created_at,"
            " updated_at, interruptible_price_micros, interruption_notice_seconds,"
            " provisioning_timeout_seconds)"
            " VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $12,"
            " $13, $14, $15) RETURNING *",
            offer.offer_id,
            offer.seller_id,
            offer.gpu,
            offer.gpus,
            to_micros(offer.price_per_gpu_hour),
            offer.currency.value,
            offer.tier.value,
            offer.billing.value,
            offer.region,
            offer.min_hours,
            offer.available_until,
            now,
            _micros(offer.interruptible_price_per_gpu_hour),
            offer.interruption_notice_seconds,
            offer.provisioning_timeout_seconds,
        )
        assert row is not None
        return OfferRow(**dict(row))

    async def get(self, seller_id: str, offer_id: str) -> OfferRow | None:
        """One of the seller's offers (another seller's is None, like a missing one)."""
        return await OFFERS.get(self._conn, seller_id, offer_id)

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[OfferRow]:
        """Up to ``limit`` of the seller's offers in id order, after the cursor id."""
        return await OFFERS.page(self._conn, seller_id, after, limit)

    async def apply_status(self, change: OfferStatusChanged, now: datetime) -> None:
        """Take a status report unless it would undo a newer state (at the commit)."""
        self._deferred.add(
            APPLY_STATUS,
            change.offer_id,
            change.seller_id,
            change.status.value,
            change.reason,
            change.remaining_gpus,
            now,
            sorted(CLOSED),
            change.capacity_gpus,
            change.leased_gpus,
            sorted(ON_BOOK),
        )

    async def apply_accepted(self, accepted: OfferAccepted, now: datetime) -> None:
        """Show the prices, notice and GPUs of a later accepted revision (at the commit)."""
        offer = accepted.offer
        self._deferred.add(
            APPLY_ACCEPTED,
            offer.offer_id,
            offer.seller_id,
            to_micros(offer.price_per_gpu_hour),
            offer.gpus,
            accepted.revision,
            now,
            sorted(CLOSED),
            _micros(offer.interruptible_price_per_gpu_hour),
            offer.interruption_notice_seconds,
        )
