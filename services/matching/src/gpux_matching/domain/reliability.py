"""Sellers' reliability as the engine keeps it: per seller a rate in basis points and the
total it was counted over.

Billing counts each seller's leases and ``gpux_contracts.reliability`` has the one rate rule
(ready in time over counted, rounded down, in basis points). The engine is told the rates by
a command of its own (``set_seller_reliability``), logged like FX rates, so a replay matches
exactly as the first run did. An order's ``min_reliability_bp`` lets it fill only from pools
whose seller's rate is at least that; a seller the engine has no rate for never qualifies.

Counts only grow, so each rate comes with the total of leases it was counted over, and the
engine takes a seller's rate only if that total is at least the one it holds (``newer``, the
contract's ``supersedes`` on totals): an instance whose feed lags behind what the previous
owner of a partition logged cannot step a seller back. A rate given without a total (logged,
or snapshotted, before totals were carried) counts as total 0: any rate with a total
replaces it, and it replaces nothing counted over more.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.reliability import BASIS_POINTS

UNRATED = -1
"""The rate of a seller with none: below every minimum, 0 included."""


def valid_bp(value: object) -> bool:
    """Whether ``value`` is a rate or a minimum in basis points: an int of 0..10,000."""
    return type(value) is int and 0 <= value <= BASIS_POINTS


def reliability_from(mapping: Mapping[str, object]) -> dict[str, int] | None:
    """Validated seller rates (seller id -> basis points), or None if any is not one."""
    out: dict[str, int] = {}
    for seller_id, rate in mapping.items():
        if not valid_bp(rate):
            return None
        out[seller_id] = rate  # type: ignore[assignment]  # valid_bp: an int
    return out


def totals_from(mapping: Mapping[str, object], rated: Mapping[str, int]) -> dict[str, int] | None:
    """Validated totals (seller id -> leases counted, an int >= 0) of sellers ``rated`` names,
    or None if any is not one."""
    out: dict[str, int] = {}
    for seller_id, total in mapping.items():
        if type(total) is not int or total < 0 or seller_id not in rated:
            return None
        out[seller_id] = total
    return out


def newer(total: int, held: int) -> bool:
    """Whether a rate counted over ``total`` leases replaces one counted over ``held``: unless
    the held one counted more (an equal total replaces, as ``supersedes`` says)."""
    return total >= held
