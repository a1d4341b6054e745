"""Where a reader of an account's events is: ``"<txid>.<seq>"``, the last row it was given
(pure).

A row's ``txid`` is the transaction that wrote it and ``seq`` its place in the table; rows are
read in (txid, seq) order, and only those of transactions older than every one still running
(see ``adapters.postgres.account_events``), so a cursor handed out is never passed by a row
that commits later.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FORM = re.compile(r"([0-9]{1,20})\.([0-9]{1,19})")
MAX_TXID = 2**64 - 1
MAX_SEQ = 2**63 - 1


class CursorError(ValueError):
    """A cursor that is not ``<txid>.<seq>`` (two decimal numbers in range)."""


class Cursor(NamedTuple):
    """A position in the account events (ordered as the rows are read)."""

    txid: int
    seq: int

    def __str__(self) -> str:
        return f"{self.txid}.{self.seq}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """The cursor ``text`` names; ``CursorError`` when it is of another form."""
        match = _FORM.fullmatch(text)
        if match is None:
            raise CursorError("a cursor is `<txid>.<seq>`, as an event's `id:` field gives it")
        txid, seq = int(match[1]), int(match[2])
        if txid > MAX_TXID or seq > MAX_SEQ:
            raise CursorError("the cursor is out of range")
        return cls(txid, seq)


START = Cursor(0, 0)
"""Before every event."""

_SNAPSHOT = re.compile(r"([0-9]{1,20}):([0-9]{1,20}):((?:[0-9]{1,20})(?:,[0-9]{1,20})*)?")


class Snapshot(NamedTuple):
    """Which transactions had committed at one moment (PostgreSQL's ``pg_snapshot``): every
    one below ``xmin``, and those below ``xmax`` that were not ``running``."""

    xmin: int
    xmax: int
    running: frozenset[int]

    @classmethod
    def parse(cls, text: str) -> Snapshot:
        """The snapshot of ``pg_current_snapshot()::text`` (``xmin:xmax:xip,...``)."""
        match = _SNAPSHOT.fullmatch(text)
        if match is None:
            raise ValueError(f"not a snapshot: {text!r}")
        running = frozenset(int(t) for t in match[3].split(",")) if match[3] else frozenset()
        return cls(int(match[1]), int(match[2]), running)

    @property
    def cursor(self) -> Cursor:
        """Before every row of a transaction that had not committed below ``xmin``."""
        return Cursor(self.xmin, 0)

    def committed(self, txid: int) -> bool:
        """Whether transaction ``txid`` had committed at the snapshot's moment."""
        return txid < self.xmin or (txid < self.xmax and txid not in self.running)
