"""The command log, snapshots and offer and order owners in the ``matching`` schema.

Commands are stored as JSON: their fields by name, instants as int epoch microseconds and
FX rates as decimal strings, so a replay feeds the engine exactly what it was given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_matching.domain import (
    AddOffer,
    CancelOrder,
    ChangeOffer,
    Command,
    Expire,
    PlaceOrder,
    SetFx,
    WithdrawOffer,
)

KINDS: dict[str, type[Any]] = {
    "add_offer": AddOffer,
    "change_offer": ChangeOffer,
    "withdraw_offer": WithdrawOffer,
    "place_order": PlaceOrder,
    "cancel_order": CancelOrder,
    "expire": Expire,
    "set_fx": SetFx,
}
_KIND_OF = {cls: kind for kind, cls in KINDS.items()}
LEGACY = -1
"""The partition of what the single engine logged before the book was kept per partition."""


def encode_command(command: Command) -> tuple[str, str]:
    """(kind, JSON body) of a command whose instants are int epoch microseconds."""
    body: dict[str, Any] = dict(command._asdict())
    for name, value in body.items():
        if value is not None and not isinstance(value, int | str):
            if name == "rates":
                body[name] = {c: str(rate) for c, rate in sorted(value.items())}
            else:
                raise TypeError(f"{name}: log only int instants, ints and strings")
    return _KIND_OF[type(command)], json.dumps(body, sort_keys=True)


def decode_command(kind: str, body: str | Mapping[str, Any]) -> Command:
    """The inverse of ``encode_command``."""
    data = dict(json.loads(body) if isinstance(body, str) else body)
    if kind == "set_fx":
        data["rates"] = {c: Decimal(rate) for c, rate in data["rates"].items()}
    command: Command = KINDS[kind](**data)
    return command


async def append_command(conn: asyncpg.Connection, partition: int, command: Command) -> int:
    """Log a command of ``partition`` (inside the caller's transaction, after ``lock_head``)
    and move the partition's head to it; returns its sequence number."""
    kind, body = encode_command(command)
    seq: int = await conn.fetchval(
        "INSERT INTO matching.commands (partition, kind, body) VALUES ($1, $2, $3::jsonb)"
        " RETURNING seq",
        partition,
        kind,
        body,
    )
    await conn.execute("UPDATE matching.heads SET seq = $2 WHERE partition = $1", partition, seq)
    return seq


async def lock_head(conn: asyncpg.Connection, partition: int) -> int:
    """The partition's last logged command (0: none), its row locked until the transaction
    ends: one command transaction per partition at a time, across instances."""
    await conn.execute(
        "INSERT INTO matching.heads (partition, seq) VALUES ($1, 0) ON CONFLICT DO NOTHING",
        partition,
    )
    seq: int = await conn.fetchval(
        "SELECT seq FROM matching.heads WHERE partition = $1 FOR UPDATE", partition
    )
    return seq


async def head(conn: asyncpg.Connection, partition: int) -> int:
    """The partition's last logged command (0: none), without a lock."""
    seq: int | None = await conn.fetchval(
        "SELECT seq FROM matching.heads WHERE partition = $1", partition
    )
    return seq or 0


async def commands_after(
    conn: asyncpg.Connection, partition: int, seq: int
) -> list[tuple[int, Command]]:
    """Every command logged for ``partition`` after ``seq``, in order (``LEGACY``: the log
    from before partitions)."""
    rows = await conn.fetch(
        "SELECT seq, kind, body FROM matching.commands"
        " WHERE partition = $1 AND seq > $2 ORDER BY seq",
        partition,
        seq,
    )
    return [(row["seq"], decode_command(row["kind"], row["body"])) for row in rows]


async def save_snapshot(
    conn: asyncpg.Connection, partition: int, seq: int, body: Mapping[str, Any], keep: int = 2
) -> None:
    """Store a partition's state after command ``seq``; its older snapshots beyond ``keep`` go."""
    await save_snapshot_json(conn, partition, seq, json.dumps(body), keep)


async def save_snapshot_json(
    conn: asyncpg.Connection, partition: int, seq: int, body: str, keep: int = 2
) -> None:
    """``save_snapshot`` of a body already encoded as JSON, in a transaction of its own (or
    the caller's)."""
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO matching.snapshots (partition, seq, body) VALUES ($1, $2, $3::jsonb)"
            " ON CONFLICT (partition, seq) DO NOTHING",
            partition,
            seq,
            body,
        )
        await conn.execute(
            "DELETE FROM matching.snapshots WHERE partition = $1 AND seq NOT IN"
            " (SELECT seq FROM matching.snapshots WHERE partition = $1"
            "  ORDER BY seq DESC LIMIT $2)",
            partition,
            keep,
        )


async def latest_snapshot(
    conn: asyncpg.Connection, partition: int
) -> tuple[int, dict[str, Any]] | None:
    """The newest snapshot of ``partition`` as (seq, body), or None (``LEGACY``: the one
    from before partitions)."""
    row = await conn.fetchrow(
        "SELECT seq, body FROM matching.snapshots WHERE partition = $1 ORDER BY seq DESC LIMIT 1",
        partition,
    )
    if row is None:
        return None
    return row["seq"], json.loads(row["body"])


async def has_own_state(conn: asyncpg.Connection, partition: int) -> bool:
    """Whether the partition has logged or snapshotted anything of its own."""
    found: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM matching.heads WHERE partition = $1 AND seq > 0)"
        " OR EXISTS (SELECT 1 FROM matching.snapshots WHERE partition = $1)",
        partition,
    )
    return found


async def offer_revision(conn: asyncpg.Connection, offer_id: str) -> int | None:
    """The last revision of an offer the book was given, or None."""
    revision: int | None = await conn.fetchval(
        "SELECT revision FROM matching.offers WHERE offer_id = $1", offer_id
    )
    return revision


async def save_offer(
    conn: asyncpg.Connection, offer_id: str, seller_id: str, gpu: str, revision: int
) -> None:
    """Remember an offer's owner and the revision the book holds."""
    await conn.execute(
        "INSERT INTO matching.offers (offer_id, seller_id, gpu, revision)"
        " VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (offer_id) DO UPDATE SET revision = EXCLUDED.revision",
        offer_id,
        seller_id,
        gpu,
        revision,
    )


async def owners(conn: asyncpg.Connection, offer_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(seller id, gpu) of each known offer."""
    rows = await conn.fetch(
        "SELECT offer_id, seller_id, gpu FROM matching.offers WHERE offer_id = ANY($1::text[])",
        list(offer_ids),
    )
    return {row["offer_id"]: (row["seller_id"], row["gpu"]) for row in rows}


async def order_known(conn: asyncpg.Connection, order_id: str) -> bool:
    """Whether the book was already given this order."""
    found: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM matching.orders WHERE order_id = $1)", order_id
    )
    return found


async def save_order(conn: asyncpg.Connection, order_id: str, buyer_id: str, gpu: str) -> None:
    """Remember an order's buyer and GPU (the engine's updates name neither)."""
    await conn.execute(
        "INSERT INTO matching.orders (order_id, buyer_id, gpu) VALUES ($1, $2, $3)"
        " ON CONFLICT (order_id) DO NOTHING",
        order_id,
        buyer_id,
        gpu,
    )


async def order_owners(
    conn: asyncpg.Connection, order_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """(buyer id, gpu) of each known order."""
    rows = await conn.fetch(
        "SELECT order_id, buyer_id, gpu FROM matching.orders WHERE order_id = ANY($1::text[])",
        list(order_ids),
    )
    return {row["order_id"]: (row["buyer_id"], row["gpu"]) for row in rows}
