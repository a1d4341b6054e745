"""Request and response bodies of the sessions routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, SecretStr

from gpux_gateway.entrypoints.schemas import Strict, examples, from_row
from gpux_gateway.sessions.repository import SessionRow

SESSION = {
    "id": "umrvvooyzzzbf4tu",
    "account_id": "01JWQXXABRF8P0H4WB1N5VPJMS",
    "key_id": "gdzoc62jqtxxxucc",
    "user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:139.0) Gecko/20100101 Firefox/139.0",
    "created_at": "2025-06-02T09:20:45Z",
    "expires_at": "2025-06-02T21:20:45Z",
    "current": True,
}
"""A browser session, as the examples show it."""


class NewSession(Strict):
    """Sign in: the API key the session stands for (its account, roles and scopes)."""

    model_config = examples(
        {"api_key": "gpx_gdzoc62jqtxxxucc_xUExIBqNzgr5fmkRseJs77OFIPcDy7cPiZ5KbDx0c4A"}
    )

    api_key: SecretStr = Field(
        max_length=200, description="An API key of the account (`gpx_…`); it is not kept."
    )


class SessionOut(BaseModel):
    """A browser session."""

    model_config = examples(SESSION)

    id: str
    account_id: str
    key_id: str = Field(description="The API key it stands for: revoking the key ends it.")
    user_agent: str
    created_at: datetime
    expires_at: datetime
    current: bool = Field(default=False, description="Whether this request came with it.")


class SessionCreated(SessionOut):
    """A new session; its cookies are set on the response."""

    model_config = examples(
        {**SESSION, "current": False, "csrf_token": "1eOSHCaYgOz_UDsesNxK0QgR3IhTXKJureeiO0EnuZU"}
    )

    csrf_token: str = Field(
        description="Send it back as `X-CSRF-Token` on every write made with the session"
        " cookie (it is also in the `gpux_csrf` cookie, readable by the page)."
    )


def session_out(row: SessionRow, current: str | None = None) -> SessionOut:
    """The API's view of a session."""
    return from_row(SessionOut, row, current=row.id == current)
