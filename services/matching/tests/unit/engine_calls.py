"""The engine's two inputs as the focused unit tests write them: an offer of H100 GPUs and a
bid for them, in EUR, by the hour, unless told otherwise (``extra`` passes any other
argument of ``add_offer`` / ``place_order``)."""

from __future__ import annotations

from gpux_matching.domain import MatchingEngine, Result

EUR = "EUR"
H100 = "h100"
OD, INT, ANY = "on_demand", "interruptible", "any"
"""The tiers, as the tests spell them."""
S = 1_000_000
"""One second in engine micros."""
RATES = {EUR: 1_000_000, "USD": 900_000}
"""Reference micros per unit: EUR is the reference, a dollar is worth 0.90 of it."""


def offer(
    e: MatchingEngine,
    offer_id: str,
    price: int,
    gpus: int = 4,
    *,
    interruptible: int | None = None,
    seller: str = "seller",
    tier: str = "on_demand",
    now: int = 1,
    **extra: object,
) -> Result:
    """``seller`` offers ``gpus`` GPUs of ``tier`` at ``price`` micros an hour (an on-demand
    pool with ``interruptible`` also sells them as interruptible at that price)."""
    return e.add_offer(
        offer_id,
        seller,
        H100,
        tier,
        price,
        gpus=gpus,
        now=now,
        interruptible_price_micros=interruptible,
        **({"currency": EUR} | extra),  # type: ignore[arg-type]
    )


def bid(
    e: MatchingEngine,
    order_id: str,
    gpus: int,
    price: int | None,
    *,
    tier: str = "any",
    buyer: str = "buyer",
    order_type: str | None = None,
    now: int = 2,
    **extra: object,
) -> Result:
    """``buyer`` bids for ``gpus`` GPUs of ``tier``: a limit order at ``price`` micros an hour,
    a market order without one (unless ``order_type`` says otherwise)."""
    if order_type is None:
        order_type = "limit" if price is not None else "market"
    return e.place_order(
        order_id,
        buyer,
        H100,
        gpus,
        now=now,
        order_type=order_type,
        price_micros=price,
        tier=tier,
        **({"currency": EUR} | extra),  # type: ignore[arg-type]
    )
