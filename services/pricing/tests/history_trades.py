"""The four trades both history suites roll into candles (the service tests on the memory unit
of work, the integration tests through Kafka and the gateway), and the book's events of them."""

from __future__ import annotations

from datetime import UTC, datetime

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.money import Currency
from gpux_contracts.orders import TradeExecuted
from gpux_devinfra.testing.payloads import trade_executed

Row = tuple[str, str, Currency, int, datetime]
"""trade id, price, currency, GPUs, executed at"""

# 1 USD = 0.92 EUR, 1 GBP = 1.18 EUR (the default FX file's rates, and the service tests').
TRADES: list[Row] = [
    ("t1", "0.40", Currency.USD, 2, datetime(2026, 11, 28, 10, 0, 5, tzinfo=UTC)),  # 0.368 EUR
    ("t2", "0.50", Currency.EUR, 1, datetime(2026, 11, 28, 10, 0, 20, tzinfo=UTC)),
    ("t3", "0.30", Currency.GBP, 1, datetime(2026, 11, 28, 10, 0, 40, tzinfo=UTC)),  # 0.354 EUR
    ("t4", "0.46", Currency.EUR, 2, datetime(2026, 11, 28, 10, 1, 10, tzinfo=UTC)),
]


def trade(row: Row, tier: str = "on_demand") -> Envelope[TradeExecuted]:
    """The ``trade.executed`` event matching publishes for one row, at the row's time."""
    trade_id, price, currency, gpus, at = row
    payload = trade_executed(
        trade_id=trade_id, price=price, currency=currency, gpus=gpus, tier=tier, executed_at=at
    )
    return wrap(payload, producer="matching", occurred_at=at)
