"""`gpux order buy --wait`: an order's progress, told as it happens, until the order is final.

The account's event stream (GET /v1/stream/events) says what changes: ``order.updated``
(status, filled GPUs, why it ended), ``order.filled`` (one fill: GPUs, offer, price; its
trade id is its lease's id) and ``lease.opened``. The stream starts from now, so once it is
open (its first line), the order is read (GET /v1/orders/{id}) for what happened before;
then again every ``REREAD_S`` while the stream is open, so an event the stream missed ends
the wait within seconds, not at the timeout; when the stream drops the order is read again
(the fallback poll) before the stream is reopened where it left off. A read that fails is
tried again, backing off, until the deadline.

The final status may come before the fills it counts: ``order.updated`` and ``order.filled``
come from different topics, and a fill reaches the orders view after the status may. So once
the order is final it is read until its fills add up to its GPUs filled (at most
``SETTLE_S``), and its final status is told last, after every fill.

``Progress`` is the pure part: what has been told, what a new reading or event adds (never a
step back: an event older than a reading is ignored).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from gpux_devinfra.amounts import per_gpu_hour
from gpux_devinfra.cli_streams import Stream, events_request
from gpux_devinfra.market_tables import order_reason, status_reason
from gpux_devinfra.sdk_client import ApiError, call
from gpux_devinfra.sse import SseEvent
from gpux_sdk import AuthenticatedClient
from gpux_sdk.api.orders import get_order
from gpux_sdk.models.order_detail_out import OrderDetailOut
from gpux_sdk.models.order_fill_out import OrderFillOut
from gpux_sdk.models.order_out import OrderOut

FINAL = frozenset({"filled", "cancelled", "expired", "rejected"})
"""Statuses an order never leaves."""
_STEP = {"pending_funds": 0, "open": 1, "partially_filled": 2}
"""How far along a status is (a final one is furthest)."""
DEFAULT_TIMEOUT_S = 300
REREAD_S = 10.0
"""How often the order is read again while the stream is open (under the gateway's 15 s
pings, so each quiet stretch gets a reading)."""
SETTLE_S = 10.0
"""How long a final order is read again for fills it counts but has not shown yet."""
SETTLE_POLL_S = 0.5
READ_BACKOFF_S = 1.0
"""The wait after a failed read of the order, doubled at each failure in a row..."""
READ_BACKOFF_CAP_S = 15.0
"""...up to this."""

clock: Callable[[], float] = time.monotonic
"""What the wait reads the time from (tests set a clock of their own)."""
pause: Callable[[float], None] = time.sleep
"""How the wait sleeps between a dropped stream and the next connection (tests set theirs)."""


def _step(status: str, filled: int) -> tuple[int, int]:
    return _STEP.get(status, 3), filled


@dataclass
class Progress:
    """What has been told of one order: its status, GPUs filled, fills and leases shown."""

    order_id: str
    gpus: int
    status: str
    filled: int = 0
    text: str = ""
    """The status as told: `rejected (insufficient_funds, short $1.35)`."""
    fills: dict[str, int] = field(default_factory=dict)
    """The GPUs of each fill told, by trade id."""
    leases: set[str] = field(default_factory=set)
    owed: bool = False
    """The final status is known but not told yet: the fills told do not add up to it."""

    @classmethod
    def of(cls, order: OrderOut) -> Progress:
        """Progress from the order as placing it answered."""
        return cls(order.id, order.gpus, str(order.status), order.filled_gpus, order_reason(order))

    @property
    def final(self) -> bool:
        """Whether the order is final (told or still owed)."""
        return self.status in FINAL

    def line(self) -> str:
        """`order 01…: partially_filled, 1 of 2 GPUs filled`."""
        return f"order {self.order_id}: {self.text}, {self.filled} of {self.gpus} GPUs filled"

    def _status(self, status: str, filled: int, reason: str) -> list[str]:
        if self.final or _step(status, filled) < _step(self.status, self.filled):
            return []  # a final order stays so, and an older word is no news
        if (status, filled, reason) == (self.status, self.filled, self.text):
            return []
        self.status, self.filled, self.text = status, filled, reason
        if self.final and sum(self.fills.values()) < filled:
            self.owed = True  # told once the fills it counts are
            return []
        return [self.line()]

    def _fill(self, trade_id: str, gpus: int, text: str) -> list[str]:
        if trade_id in self.fills:
            return []
        self.fills[trade_id] = gpus
        if self.owed and sum(self.fills.values()) >= self.filled:
            return [text, *self.finish()]
        return [text]

    def finish(self) -> list[str]:
        """The final status if still owed (the wait for its fills is over)."""
        if not self.owed:
            return []
        self.owed = False
        return [self.line()]

    def reading(self, order: OrderDetailOut) -> list[str]:
        """What a reading of the order adds: new fills, then its status if it moved on."""
        told = [
            line
            for fill in order.fills
            for line in self._fill(fill.trade_id, fill.gpus, fill_line(fill))
        ]
        status = str(order.status)
        return told + self._status(status, order.filled_gpus, order_reason(order))

    def event(self, event: SseEvent) -> list[str]:
        """What an account event adds (nothing for another order's or another type)."""
        try:
            body = json.loads(event.data)
        except ValueError:
            return []
        data: dict[str, Any] = (body.get("data") or {}) if isinstance(body, dict) else {}
        if data.get("order_id") != self.order_id:
            return []
        kind = body.get("type") or event.event
        if kind == "order.filled":
            gpus = data.get("gpus")
            gpus = gpus if isinstance(gpus, int) else 0
            return self._fill(str(data.get("trade_id")), gpus, _event_fill_line(data))
        if kind == "lease.opened" and data.get("lease_id") not in self.leases:
            self.leases.add(str(data.get("lease_id")))
            return [
                f"  lease {data.get('lease_id')} opened: {data.get('gpus')} x {data.get('gpu')}"
            ]
        if kind == "order.updated" and isinstance(data.get("status"), str):
            return self._status(data["status"], int(data.get("filled_gpus") or 0), _reason(data))
        return []


def fill_line(fill: OrderFillOut) -> str:
    """`  filled 1 GPU from offer 01… at $0.40/GPU-h: lease 01…`."""
    price = per_gpu_hour(fill.price_per_gpu_hour, str(fill.currency))
    return _fill_text(fill.gpus, fill.offer_id, price, fill.trade_id)


def _event_fill_line(data: dict[str, Any]) -> str:
    price = per_gpu_hour(data.get("price_per_gpu_hour"), data.get("currency"))
    return _fill_text(data.get("gpus"), data.get("offer_id"), price, data.get("trade_id"))


def _fill_text(gpus: object, offer_id: object, price: str, lease_id: object) -> str:
    noun = "GPU" if gpus == 1 else "GPUs"
    return f"  filled {gpus} {noun} from offer {offer_id} at {price}: lease {lease_id}"


def _reason(data: dict[str, Any]) -> str:
    """An ``order.updated`` event's status and reason, as ``order_reason`` says an order's."""
    return status_reason(
        str(data["status"]),
        data.get("reason"),
        data.get("shortfall"),
        data.get("shortfall_currency"),
    )


@dataclass
class Waiter:
    """Follows one order until it is final or ``timeout_s`` passed; says each step."""

    client: AuthenticatedClient
    progress: Progress
    say: Callable[[str], None]
    timeout_s: float = DEFAULT_TIMEOUT_S
    last: OrderDetailOut | None = None
    """The order as last read."""
    _due: float = 0.0
    """When the order is to be read next while the stream is open."""
    _failures: int = 0
    """Reads of the order that failed in a row."""

    def read(self) -> bool:
        """Read the order (GET /v1/orders/{id}) and say what it adds; whether it could be read
        (a failure is said once in a row of them, and the next read backs off)."""
        try:
            order = call(get_order.sync_detailed, self.client, order_id=self.progress.order_id)
        except ApiError as exc:
            if not self._failures:
                self.say(f"  (the order could not be read: {exc}; trying again)")
            self._failures += 1
            backoff = READ_BACKOFF_S * 2 ** (self._failures - 1)
            self._due = clock() + min(READ_BACKOFF_CAP_S, backoff)
            return False
        self._failures = 0
        self._due = clock() + REREAD_S
        self.last = order
        self._say(self.progress.reading(order))
        return True

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            self.say(line)

    def run(self) -> bool:
        """Follow the order; whether it ended by the deadline (its final status told last)."""
        deadline = clock() + self.timeout_s
        stream = Stream(self.client, events_request)
        while not self.progress.final and clock() < deadline:
            try:
                self._follow(stream, deadline)
            except (httpx.HTTPError, ApiError) as exc:  # StreamRefused is an ApiError
                if clock() < deadline:  # else it only timed out with the wait
                    self.say(f"  (the event stream dropped: {_why(exc)}; reading the order)")
            if not self.progress.final:
                self.read()
            if not self.progress.final:
                wait = stream.retry_s if not self._failures else self._due - clock()
                pause(max(0.0, min(wait, deadline - clock())))
        if not self.progress.final:
            return False
        self._settle()
        return True

    def _follow(self, stream: Stream, deadline: float) -> None:
        """Read one connection of the stream until the order is final or the deadline,
        reading the order once the stream is open and whenever a reading is due."""
        opened = False
        for item in stream.items(min(stream.silence_s, deadline - clock())):
            if item is not None:
                self._say(self.progress.event(item))
            elif not opened:
                opened = True
                if not self._failures:
                    self._due = clock()  # what happened before the stream began
            if not self.progress.final and clock() >= self._due:
                self.read()
            if self.progress.final or clock() >= deadline:
                return

    def _settled(self) -> bool:
        last = self.last
        return not self.progress.owed and last is not None and str(last.status) in FINAL

    def _settle(self) -> None:
        """Read the final order until it reads final and its fills add up (at most
        ``SETTLE_S``); then tell its final status, last."""
        until = clock() + SETTLE_S
        while not self._settled():
            self.read()
            if self._settled() or clock() >= until:
                break
            pause(SETTLE_POLL_S)
        self._say(self.progress.finish())


def _why(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ApiError) else type(exc).__name__
