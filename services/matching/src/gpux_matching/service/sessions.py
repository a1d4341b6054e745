"""Market sessions: the latest state per scope, from ``market.sessions``.

Not a book command: the state is kept in the database (shared by every instance) and read
when a funded order arrives (``orders.on_funded``). An older change than the one stored for
its scope is ignored.
"""

from __future__ import annotations

import logging

from gpux_contracts.events import Envelope
from gpux_contracts.market import MarketStateChanged
from gpux_matching.service.unit_of_work import MatchingUnitOfWork

log = logging.getLogger("gpux.matching")


async def on_state_changed(uow: MatchingUnitOfWork, event: Envelope[MarketStateChanged]) -> None:
    """Keep the latest state of the change's scope."""
    changed = event.payload
    await uow.market.record(changed)
    log.info("market state", extra={"scope": changed.scope, "state": changed.state.value})
