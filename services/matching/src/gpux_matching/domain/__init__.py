"""The pure matching engine: order books per GPU model and tier, price-time priority.

No I/O and no clock reads: every command carries its time, FX rates and sellers'
reliability rates come in as commands, and the same commands in the same order always give
the same results (trade ids included).
Handlers (``gpux_matching.service``), persistence (``adapters``) and transport
(``entrypoints``) live outside this package.
"""

from gpux_matching.domain.commands import (
    AddOffer,
    CancelOrder,
    ChangeOffer,
    Command,
    Expire,
    PlaceOrder,
    ReclaimLease,
    ReleaseLease,
    SetFx,
    SetSellerReliability,
    WithdrawOffer,
    apply,
    books_changed,
    decode_command,
    encode_command,
)
from gpux_matching.domain.engine import MatchingEngine
from gpux_matching.domain.levels import DEPTH, BookLevel, BookLevels, reference_micros
from gpux_matching.domain.partitioning import partition_of
from gpux_matching.domain.results import (
    Fill,
    Interruption,
    LeaseView,
    Level,
    LevelChange,
    OfferUpdate,
    OrderUpdate,
    PoolView,
    Result,
)
from gpux_matching.domain.snapshot import (
    Capture,
    bid_row_to_plain,
    json_parts,
    offer_row_to_plain,
    snapshot_from,
)
from gpux_matching.domain.types import (
    OfferStatus,
    OrderStatus,
    OrderType,
    Reason,
    Side,
    Tier,
    TimeInForce,
)
from gpux_matching.domain.units import Instant, Rate, epoch_micros, reference_price

__all__ = [
    "DEPTH",
    "AddOffer",
    "BookLevel",
    "BookLevels",
    "CancelOrder",
    "Capture",
    "ChangeOffer",
    "Command",
    "Expire",
    "Fill",
    "Instant",
    "Interruption",
    "LeaseView",
    "Level",
    "LevelChange",
    "MatchingEngine",
    "OfferStatus",
    "OfferUpdate",
    "OrderStatus",
    "OrderType",
    "OrderUpdate",
    "PlaceOrder",
    "PoolView",
    "Rate",
    "Reason",
    "ReclaimLease",
    "ReleaseLease",
    "Result",
    "SetFx",
    "SetSellerReliability",
    "Side",
    "Tier",
    "TimeInForce",
    "WithdrawOffer",
    "apply",
    "bid_row_to_plain",
    "books_changed",
    "decode_command",
    "encode_command",
    "epoch_micros",
    "json_parts",
    "offer_row_to_plain",
    "partition_of",
    "reference_micros",
    "reference_price",
    "snapshot_from",
]
