"""The leases and ledger_lines tables: billing's events, applied; leases, statements, earnings.

Every writer is an upsert (an end: the upsert of its totals a charge makes, then the end),
safe in any order and under replay (see ``leases.repository``), so a batch of lease events is
a few pipelined runs of statements, not one round trip each.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LedgerPosted,
)
from gpux_contracts.money import to_micros
from gpux_contracts.settlement import LeaseCharges
from gpux_gateway.adapters.postgres.deferred import DeferredRepository
from gpux_gateway.domain.leases import totals_micros
from gpux_gateway.leases.repository import Earnings, LeaseFilter, LeaseRow, LedgerLineRow

# A lease opened with a provisioning deadline ($17) provisions unless its row is final or its
# lease.ready was read already (domain.leases.stored_status); once it was, the lease ends where
# the ready said (a fixed length counts from ready_at).
APPLY_OPENED = (
    "INSERT INTO gateway.leases AS l (id, opened, order_id, offer_id, buyer_id, seller_id, gpu,"
    " tier, gpus, price_micros, currency, wallet_currency, billing, hours, started_at,"
    " ends_at, updated_at, provisioning_deadline, status)"
    " VALUES ($1, true, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,"
    " $17, CASE WHEN $17::timestamptz IS NULL THEN 'running' ELSE 'provisioning' END)"
    " ON CONFLICT (id) DO UPDATE SET opened = true, order_id = EXCLUDED.order_id,"
    " offer_id = EXCLUDED.offer_id, seller_id = EXCLUDED.seller_id, gpu = EXCLUDED.gpu,"
    " tier = EXCLUDED.tier, gpus = EXCLUDED.gpus, price_micros = EXCLUDED.price_micros,"
    " currency = EXCLUDED.currency, wallet_currency = EXCLUDED.wallet_currency,"
    " billing = EXCLUDED.billing, hours = EXCLUDED.hours, started_at = EXCLUDED.started_at,"
    " ends_at = CASE WHEN l.ready_at IS NULL THEN EXCLUDED.ends_at ELSE l.ends_at END,"
    " updated_at = EXCLUDED.updated_at,"
    " provisioning_deadline = EXCLUDED.provisioning_deadline,"
    " status = CASE WHEN l.status IN ('ended', 'failed') OR l.ready_at IS NOT NULL"
    " OR EXCLUDED.provisioning_deadline IS NULL THEN l.status ELSE 'provisioning' END"
)

# The first ready_at read stays, with its ends_at (a fixed-length lease ends `hours` after
# ready_at); a provisioning lease runs from then. A lease.ready read before the lease's opening
# makes its row (running: its opening then leaves it so, and keeps the ready's end).
APPLY_READY = (
    "INSERT INTO gateway.leases AS l (id, buyer_id, seller_id, ready_at, updated_at, ends_at)"
    " VALUES ($1, $2, $3, $4, $5, $6)"
    " ON CONFLICT (id) DO UPDATE SET"
    " seller_id = coalesce(l.seller_id, EXCLUDED.seller_id),"
    " ends_at = CASE WHEN l.ready_at IS NULL THEN EXCLUDED.ends_at ELSE l.ends_at END,"
    " ready_at = coalesce(l.ready_at, EXCLUDED.ready_at),"
    " status = CASE WHEN l.status = 'provisioning' THEN 'running' ELSE l.status END,"
    " updated_at = EXCLUDED.updated_at"
)

# The totals of the highest period read stay (domain.leases.totals_apply): each total is
# replaced only when the held period is null or at most the event's. A lease.charged or a
# lease.ended read before the lease's lease.opened makes its row from what it carries.
APPLY_TOTALS = (
    "INSERT INTO gateway.leases AS l (id, buyer_id, seller_id, currency, wallet_currency,"
    " updated_at, period, charged_through, total_charged_micros, total_paid_micros,"
    " total_fee_micros, total_seller_micros)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (id) DO UPDATE SET"
    " seller_id = coalesce(l.seller_id, EXCLUDED.seller_id),"
    " currency = coalesce(l.currency, EXCLUDED.currency),"
    " wallet_currency = coalesce(l.wallet_currency, EXCLUDED.wallet_currency),"
    " period = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.period ELSE l.period END,"
    " charged_through = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.charged_through ELSE l.charged_through END,"
    " total_charged_micros = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.total_charged_micros ELSE l.total_charged_micros END,"
    " total_paid_micros = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.total_paid_micros ELSE l.total_paid_micros END,"
    " total_fee_micros = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.total_fee_micros ELSE l.total_fee_micros END,"
    " total_seller_micros = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.total_seller_micros ELSE l.total_seller_micros END,"
    " updated_at = CASE WHEN l.period IS NULL OR l.period <= EXCLUDED.period"
    " THEN EXCLUDED.updated_at ELSE l.updated_at END"
)

APPLY_LOW_BALANCE = (
    "INSERT INTO gateway.leases AS l (id, buyer_id, wallet_currency, low_balance_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (id) DO UPDATE SET"
    " low_balance_at = least(l.low_balance_at, EXCLUDED.low_balance_at),"
    " wallet_currency = coalesce(l.wallet_currency, EXCLUDED.wallet_currency),"
    " updated_at = EXCLUDED.updated_at"
)

# The first notice read stays; one read before the lease's opening makes its row (its wallet
# currency comes with another event).
APPLY_NOTICE = (
    "INSERT INTO gateway.leases AS l (id, buyer_id, seller_id, offer_id, interrupt_at,"
    " interruption_cause, interruption_noticed_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    " ON CONFLICT (id) DO UPDATE SET"
    " seller_id = coalesce(l.seller_id, EXCLUDED.seller_id),"
    " offer_id = coalesce(l.offer_id, EXCLUDED.offer_id),"
    " interrupt_at = coalesce(l.interrupt_at, EXCLUDED.interrupt_at),"
    " interruption_cause = coalesce(l.interruption_cause, EXCLUDED.interruption_cause),"
    " interruption_noticed_at = coalesce(l.interruption_noticed_at,"
    " EXCLUDED.interruption_noticed_at),"
    " updated_at = EXCLUDED.updated_at"
)

# A page of the leases an account rents ($2 not 'seller') or provides ($2 not 'buyer'), in
# status $3 as domain.leases.status_of tells it at $6 (the listing's instant).
PAGE = (
    "SELECT * FROM gateway.leases WHERE opened"
    " AND (($2::text IS DISTINCT FROM 'seller' AND buyer_id = $1)"
    " OR ($2::text IS DISTINCT FROM 'buyer' AND seller_id = $1))"
    " AND ($3::text IS NULL OR $3 = CASE WHEN status IN ('ended', 'failed') THEN status"
    " WHEN interrupt_at IS NOT NULL THEN 'interrupting'"
    " WHEN started_at > $6 THEN 'scheduled' ELSE status END)"
    " AND ($4::text IS NULL OR id > $4) ORDER BY id LIMIT $5"
)

# The first end read stays: a lease that ended (or failed) keeps its reason, instant, unpaid
# amount and failure. Run after APPLY_TOTALS with the end's final totals, so the row exists.
APPLY_END = (
    "UPDATE gateway.leases SET"
    " end_reason = CASE WHEN status NOT IN ('ended', 'failed') THEN $2 ELSE end_reason END,"
    " ended_at = CASE WHEN status NOT IN ('ended', 'failed') THEN $3 ELSE ended_at END,"
    " unpaid_micros = CASE WHEN status NOT IN ('ended', 'failed') THEN $4"
    " ELSE unpaid_micros END,"
    " failure = CASE WHEN status NOT IN ('ended', 'failed') THEN $6 ELSE failure END,"
    " failure_detail = CASE WHEN status NOT IN ('ended', 'failed') THEN $7"
    " ELSE failure_detail END,"
    " updated_at = CASE WHEN status NOT IN ('ended', 'failed') THEN $5 ELSE updated_at END,"
    " status = CASE WHEN status IN ('ended', 'failed') THEN status"
    " WHEN $2 = 'failed' THEN 'failed' ELSE 'ended' END"
    " WHERE id = $1"
)

ADD_LINE = (
    "INSERT INTO gateway.ledger_lines (transfer_id, owner, currency, account_kind,"
    " transfer_kind, amount_micros, created_at, reference, fx_rate, fx_base, fx_quote,"
    " fx_rate_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (transfer_id, owner, currency, account_kind) DO NOTHING"
)


class PostgresLeases(DeferredRepository):
    """Leases in ``gateway.leases``; billing's events are deferred to the commit."""

    async def get(self, account_id: str, lease_id: str) -> LeaseRow | None:
        """A lease the account rents or provides (anyone else's is None, like a missing one)."""
        row = await self._conn.fetchrow(
            "SELECT * FROM gateway.leases WHERE id = $1 AND opened"
            " AND (buyer_id = $2 OR seller_id = $2)",
            lease_id,
            account_id,
        )
        return None if row is None else LeaseRow(**dict(row))

    async def page(
        self, which: LeaseFilter, *, after: str | None, limit: int, now: datetime
    ) -> list[LeaseRow]:
        """Up to ``limit`` of the leases ``which`` shows at ``now``, in id order, after the
        cursor lease."""
        rows = await self._conn.fetch(
            PAGE,
            which.account_id,
            which.role,
            which.status,
            after,
            limit,
            now,
        )
        return [LeaseRow(**dict(r)) for r in rows]

    async def current(self, lease_id: str) -> LeaseRow | None:
        """The lease as this unit leaves it so far: the unit's queued writes run first."""
        await self._deferred.run(self._conn)
        row = await self._conn.fetchrow("SELECT * FROM gateway.leases WHERE id = $1", lease_id)
        return None if row is None else LeaseRow(**dict(row))

    async def earnings(self, seller_id: str) -> list[Earnings]:
        """Per offer currency: the sums of the running totals of the leases the account sells."""
        rows = await self._conn.fetch(
            "SELECT currency, sum(total_charged_micros) AS gross, sum(total_fee_micros) AS fee,"
            " sum(total_seller_micros) AS net, count(*) AS leases,"
            " count(*) FILTER (WHERE status = 'running') AS running"
            " FROM gateway.leases WHERE seller_id = $1 AND opened"
            " GROUP BY currency ORDER BY currency",
            seller_id,
        )
        return [
            Earnings(
                r["currency"],
                int(r["gross"]),
                int(r["fee"]),
                int(r["net"]),
                r["leases"],
                r["running"],
            )
            for r in rows
        ]

    async def apply_opened(self, opened: LeaseOpened, now: datetime) -> None:
        """Record what a lease is (at the commit)."""
        self._deferred.add(
            APPLY_OPENED,
            opened.lease_id,
            opened.order_id,
            opened.offer_id,
            opened.buyer_id,
            opened.seller_id,
            opened.gpu,
            opened.tier,
            opened.gpus,
            to_micros(opened.price_per_gpu_hour),
            opened.currency.value,
            opened.wallet_currency.value,
            opened.billing.value,
            opened.hours,
            opened.started_at,
            opened.ends_at,
            now,
            opened.provisioning_deadline,
        )

    def _take_totals(self, event: LeaseCharged | LeaseCharges | LeaseEnded, now: datetime) -> None:
        self._deferred.add(
            APPLY_TOTALS,
            event.lease_id,
            event.buyer_id,
            event.seller_id,
            event.currency.value,
            event.wallet_currency.value,
            now,
            *totals_micros(event.totals),
        )

    async def apply_charged(self, charged: LeaseCharged, now: datetime) -> None:
        """Take a charge's running totals (at the commit)."""
        self._take_totals(charged, now)

    async def apply_settled(self, charges: Sequence[LeaseCharges], now: datetime) -> None:
        """Take each lease's running totals as a charge's (at the commit: the same statement,
        so a run of them, charged one by one or aggregated, is one ``executemany``)."""
        for item in charges:
            self._take_totals(item, now)

    async def apply_low_balance(self, warning: LeaseLowBalance, now: datetime) -> None:
        """Note when the buyer's funds first ran low for this lease (at the commit)."""
        self._deferred.add(
            APPLY_LOW_BALANCE,
            warning.lease_id,
            warning.buyer_id,
            warning.wallet_currency.value,
            warning.as_of,
            now,
        )

    async def apply_notice(self, notice: LeaseInterruptionNoticed, now: datetime) -> None:
        """Note the lease's interruption (at the commit; the first notice read stays)."""
        self._deferred.add(
            APPLY_NOTICE,
            notice.lease_id,
            notice.buyer_id,
            notice.seller_id,
            notice.offer_id,
            notice.interrupt_at,
            notice.cause.value,
            notice.noticed_at,
            now,
        )

    async def apply_ended(self, ended: LeaseEnded, now: datetime) -> None:
        """Take the final totals as a charge's, then end the lease for good (at the commit)."""
        self._take_totals(ended, now)
        self._deferred.add(
            APPLY_END,
            ended.lease_id,
            ended.reason.value,
            ended.ended_at,
            to_micros(ended.unpaid),
            now,
            None if ended.failure is None else ended.failure.value,
            ended.detail,
        )

    async def apply_ready(self, ready: LeaseReady, now: datetime) -> None:
        """Run a provisioning lease from its ``ready_at`` (at the commit; the first stays)."""
        self._deferred.add(
            APPLY_READY,
            ready.lease_id,
            ready.buyer_id,
            ready.seller_id,
            ready.ready_at,
            now,
            ready.ends_at,
        )


class PostgresLedger(DeferredRepository):
    """Statement lines in ``gateway.ledger_lines``; posted transfers are deferred to the commit."""

    async def add_posted(self, posted: LedgerPosted) -> None:
        """Keep each line of a posted transfer once (at the commit)."""
        for line in posted.lines:
            self._deferred.add(
                ADD_LINE,
                posted.transfer_id,
                line.owner,
                line.currency.value,
                line.kind,
                posted.kind,
                to_micros(line.amount),
                posted.created_at,
                posted.reference,
                posted.fx_rate,
                None if posted.fx_base is None else posted.fx_base.value,
                None if posted.fx_quote is None else posted.fx_quote.value,
                posted.fx_rate_at,
            )

    async def page(
        self, owner: str, *, currency: str | None, before: int | None, limit: int
    ) -> list[LedgerLineRow]:
        """Up to ``limit`` of the account's lines, newest first, before the cursor line."""
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.ledger_lines WHERE owner = $1"
            " AND ($2::text IS NULL OR currency = $2)"
            " AND ($3::bigint IS NULL OR (created_at, seq) <"
            " (SELECT created_at, seq FROM gateway.ledger_lines WHERE seq = $3 AND owner = $1))"
            " ORDER BY created_at DESC, seq DESC LIMIT $4",
            owner,
            currency,
            before,
            limit,
        )
        return [LedgerLineRow(**dict(r)) for r in rows]
