"""Market sessions: the admin opens and halts trading; anyone can see the state.

``POST /v1/admin/market`` writes a ``market.state_changed`` event to the gateway outbox for
``market.sessions`` (key ``*`` for the whole market, else the GPU id); matching rejects new
funded orders while a GPU or the whole market is halted. ``GET /v1/market`` answers from the
gateway's in-memory view of that compacted topic, so it follows a change within moments.
Before any event every scope is open.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints

from gpux_contracts.ids import new_id
from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_contracts.topics import MARKET_SESSIONS
from gpux_gateway.api.auth import anonymous_limit, principal_dependency, problem_from
from gpux_gateway.api.common import envelope
from gpux_gateway.api.schemas import Strict
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import AccessError, Principal
from gpux_gateway.readmodels.market import MarketView
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, ProblemError

ALL = "all"
"""The request's name for the whole market (``*`` on the topic)."""
RETRY_AFTER_S = 5

_PRINTABLE = r"^[^\x00-\x1f\x7f]+$"


class MarketStateIn(Strict):
    """Open or halt trading for the whole market (`all`) or one GPU model."""

    scope: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")] = Field(
        description="`all` for every GPU model, else a GPU id."
    )
    state: MarketState
    reason: (
        Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=_PRINTABLE)] | None
    ) = None


class MarketStateAccepted(BaseModel):
    """The change is on its way to the market (matching applies it within moments)."""

    event_id: str
    scope: str
    state: MarketState
    reason: str | None


class MarketOut(BaseModel):
    """Whether trading is open: for the whole market and each GPU model with its own state."""

    all: MarketState = Field(description="The whole market; `halted` halts every GPU model.")
    gpus: dict[str, MarketState] = Field(
        description="GPU models with a state of their own; any other is as `all` says."
    )


UNAVAILABLE: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "The market state has not been read from Kafka yet (retry shortly)",
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
}


def router(gw: Gateway, view: MarketView) -> APIRouter:
    """``POST /v1/admin/market`` and ``GET /v1/market``."""
    api = APIRouter(prefix="/v1")
    principal = principal_dependency(gw)

    @api.post(
        "/admin/market",
        status_code=202,
        response_model=MarketStateAccepted,
        tags=["admin"],
        summary="Open or halt trading (all GPU models or one)",
    )
    async def set_market(
        body: MarketStateIn, who: Annotated[Principal, Depends(principal)]
    ) -> JSONResponse:
        try:
            who.require_admin()
        except AccessError as exc:
            raise problem_from(exc) from None
        scope = ALL_GPUS if body.scope == ALL else body.scope
        changed = MarketStateChanged(
            scope=scope,
            state=body.state,
            reason=body.reason,
            changed_at=gw.clock.now(),
            changed_by="admin",
        )
        event_id = new_id()
        message = Outgoing(MARKET_SESSIONS, scope, envelope(gw, changed, event_id))
        async with gw.pool.acquire() as conn, conn.transaction():
            await add_to_outbox(conn, "gateway", [message])
        accepted = MarketStateAccepted(
            event_id=event_id, scope=body.scope, state=body.state, reason=body.reason
        )
        return JSONResponse(accepted.model_dump(mode="json"), status_code=202)

    @api.get(
        "/market",
        response_model=MarketOut,
        responses=UNAVAILABLE,
        dependencies=[Depends(anonymous_limit(gw))],
        tags=["market data"],
        summary="Whether trading is open, for all GPU models and each",
    )
    async def market() -> MarketOut:
        if not view.ready:
            raise ProblemError(
                503,
                "market-unavailable",
                "Service unavailable",
                "the market state has not been loaded from Kafka yet; retry shortly",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        return MarketOut(all=view.all_state(), gpus=view.gpu_states())

    return api
