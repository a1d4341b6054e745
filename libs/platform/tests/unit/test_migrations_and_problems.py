from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel, ValidationError

from gpux_platform.errors import redact
from gpux_platform.migrations import MigrationError, load
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, ProblemError, install_problem_handlers
from gpux_platform.service import settings_error_line
from gpux_platform.settings import GpuxSettings


def test_migrations_load_in_version_order(tmp_path: Path) -> None:
    (tmp_path / "0002_second.sql").write_text("SELECT 2;")
    (tmp_path / "0001_first.sql").write_text("SELECT 1;")
    assert [m.name for m in load(tmp_path)] == ["0001_first", "0002_second"]


@pytest.mark.parametrize("name", ["1_bad.sql", "0001-Bad.sql"])
def test_badly_named_migrations_are_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("SELECT 1;")
    with pytest.raises(MigrationError):
        load(tmp_path)


def test_redact_hides_passwords() -> None:
    assert redact("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact("redis://h:1/0") == "redis://h:1/0"


class Body(BaseModel):
    n: int


def _app() -> FastAPI:
    app = FastAPI()
    install_problem_handlers(app)

    @app.post("/things")
    async def create(body: Body) -> dict[str, int]:
        if body.n == 0:
            raise ProblemError(409, "zero", "Zero is taken", "n=0 exists already")
        if body.n == 13:
            raise RuntimeError("boom")
        return {"n": body.n}

    return app


async def test_errors_are_problem_json() -> None:
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        bad = await client.post("/things", json={"n": "x"})
        assert bad.status_code == 422
        assert bad.headers["content-type"] == PROBLEM_MEDIA_TYPE
        assert bad.json()["type"].endswith("/validation-error")
        assert bad.json()["detail"].startswith("body.n:")
        conflict = await client.post("/things", json={"n": 0})
        assert conflict.status_code == 409
        assert conflict.json()["detail"] == "n=0 exists already"
        missing = await client.get("/nowhere")
        assert missing.status_code == 404
        assert missing.json()["type"].endswith("/not-found")
        crash = await client.post("/things", json={"n": 13})
        assert crash.status_code == 500
        assert "boom" not in crash.text


def test_settings_error_line_names_the_variable() -> None:
    with pytest.raises(ValidationError) as info:
        GpuxSettings(http_port=-1)
    assert settings_error_line(info.value).startswith("GPUX_HTTP_PORT:")
