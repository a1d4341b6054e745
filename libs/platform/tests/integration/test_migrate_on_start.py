"""A service applies its migrations at start-up unless told not to (Kubernetes migrates in an
init container, as the schema's migration role, and the runtime role has no DDL)."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from gpux_platform.service import ServiceSpec, Wiring, open_runtime
from gpux_platform.settings import GpuxSettings


async def _no_wiring(_: object) -> Wiring:
    return Wiring()


async def _schema_exists(settings: GpuxSettings, schema: str) -> bool:
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        found: bool = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema
        )
    finally:
        await conn.close()
    return found


async def test_start_up_migrates_only_when_told_to(
    gpux_settings: GpuxSettings, tmp_path: Path
) -> None:
    (tmp_path / "0001_things.sql").write_text("CREATE TABLE things (id text PRIMARY KEY);\n")
    spec = ServiceSpec(
        name="migrating", settings_type=GpuxSettings, wire=_no_wiring, migrations=tmp_path
    )
    told_not_to = gpux_settings.model_copy(update={"migrate_on_start": False})
    runtime = await open_runtime(spec, told_not_to)
    await runtime.pool.close()
    await runtime.redis.aclose()
    assert not await _schema_exists(gpux_settings, "migrating")
    runtime = await open_runtime(spec, gpux_settings)
    await runtime.pool.close()
    await runtime.redis.aclose()
    assert await _schema_exists(gpux_settings, "migrating")
