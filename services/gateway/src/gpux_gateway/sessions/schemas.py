"""Request and response bodies of the sessions routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, SecretStr

from gpux_gateway.entrypoints.schemas import Strict
from gpux_gateway.sessions.repository import SessionRow


class NewSession(Strict):
    """Sign in: the API key the session stands for (its account, roles and scopes)."""

    api_key: SecretStr = Field(
        max_length=200, description="An API key of the account (`gpx_…`); it is not kept."
    )


class SessionOut(BaseModel):
    """A browser session."""

    id: str
    account_id: str
    key_id: str = Field(description="The API key it stands for: revoking the key ends it.")
    user_agent: str
    created_at: datetime
    expires_at: datetime
    current: bool = Field(default=False, description="Whether this request came with it.")


class SessionCreated(SessionOut):
    """A new session; its cookies are set on the response."""

    csrf_token: str = Field(
        description="Send it back as `X-CSRF-Token` on every write made with the session"
        " cookie (it is also in the `gpux_csrf` cookie, readable by the page)."
    )


def session_out(row: SessionRow, current: str | None = None) -> SessionOut:
    """The API's view of a session."""
    return SessionOut(
        id=row.id,
        account_id=row.account_id,
        key_id=row.key_id,
        user_agent=row.user_agent,
        created_at=row.created_at,
        expires_at=row.expires_at,
        current=row.id == current,
    )
