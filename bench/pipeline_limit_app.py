"""The REST front door's limit on this box: a minimal FastAPI app, run as its own process.

It takes the same ``POST /v1/orders`` body as the gateway, validates it with a strict pydantic
model of the same fields, does one asyncpg INSERT into a scratch table of its own and answers
202 with the order; uvicorn runs it with the same settings as our services (``uvicorn.Config``
defaults, no access log). bench/pipeline_limits.py starts it and drops the table afterwards.

    python bench/pipeline_limit_app.py serve PORT DSN
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Literal

import asyncpg
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

SCRATCH_TABLE = "bench_limit_orders"


class OrderBody(BaseModel):
    """The gateway's order body, field for field (unknown fields refused)."""

    model_config = ConfigDict(extra="forbid")
    gpu: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    gpus: int = Field(ge=1, le=4096)
    type: Literal["market", "limit"]
    max_price_per_gpu_hour: Decimal | None = Field(default=None, gt=0, lt=100000)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    wallet_currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    tier: Literal["on_demand", "interruptible", "any"] = "any"
    region: str | None = Field(default=None, max_length=30)
    hours: int | None = Field(default=None, ge=1, le=8760)
    time_in_force: Literal["gtc", "gtd", "ioc", "fok"] = "gtc"
    expires_at: AwareDatetime | None = None


def build_app(dsn: str) -> FastAPI:
    """The limit app: one strict body model, one INSERT, 202."""
    pools: list[asyncpg.Pool] = []

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        pool = await asyncpg.create_pool(dsn, min_size=2, max_size=10)
        pools.append(pool)
        yield
        await pool.close()

    app = FastAPI(lifespan=lifespan)
    counter = iter(range(1 << 62))

    @app.post("/v1/orders", status_code=202)
    async def place(body: OrderBody) -> JSONResponse:
        order_id = f"limit-{next(counter)}"
        document = body.model_dump(mode="json")
        await pools[0].execute(
            f"INSERT INTO {SCRATCH_TABLE} (id, body) VALUES ($1, $2)",
            order_id,
            json.dumps(document),
        )
        return JSONResponse({"id": order_id, "status": "pending_funds", **document}, 202)

    @app.get("/readyz")
    async def ready() -> dict[str, str]:
        return {"status": "ok"}

    return app


def serve(port: int, dsn: str) -> None:
    """Run the limit app (blocking)."""
    config = uvicorn.Config(
        build_app(dsn), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3])
    else:
        raise SystemExit(__doc__)
