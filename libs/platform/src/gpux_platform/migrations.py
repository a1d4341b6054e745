"""Forward-only SQL migrations per service, applied at start-up.

Each service owns one PostgreSQL schema (named after the service) and a
directory of ``NNNN_name.sql`` files. Before them, every schema gets the shared
migrations of ``gpux_platform/sql`` (outbox and inbox tables), recorded as
``common/NNNN_name``. Applied migrations are recorded by name in
``<schema>.schema_migrations`` with a checksum; an edited migration that was
already applied is refused. An advisory lock serialises services starting at
once. We wrote this small runner (about 60 lines) instead of taking yoyo or
alembic because both want a synchronous driver or an ORM beside asyncpg.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
SHARED = Path(__file__).resolve().parent / "sql"


@dataclass(frozen=True, slots=True)
class Migration:
    """One SQL file: its version, name, text and checksum."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """SHA-256 of the SQL text."""
        return hashlib.sha256(self.sql.encode()).hexdigest()


class MigrationError(RuntimeError):
    """A migration directory or history that cannot be applied safely."""


def load(directory: Path, prefix: str = "") -> list[Migration]:
    """The migrations in a directory, in version order, their names prefixed."""
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: name it NNNN_description.sql")
        found.append(Migration(int(match.group(1)), prefix + path.stem, path.read_text()))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"{directory}: two migrations share a version")
    return found


async def apply(pool: asyncpg.Pool, schema: str, directory: Path | None) -> list[str]:
    """Apply the pending migrations of one schema (shared ones first); returns the names applied."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
        raise MigrationError(f"bad schema name {schema!r}")
    # Reading a few small files before the first query; no event loop work is waiting yet.
    own = load(directory) if directory is not None and directory.exists() else []  # noqa: ASYNC240
    migrations = [*load(SHARED, "common/"), *own]
    applied: list[str] = []
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"migrate:{schema}")
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.schema_migrations ("
            " name text PRIMARY KEY, version integer NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        rows = await conn.fetch(f"SELECT name, checksum FROM {schema}.schema_migrations")  # noqa: S608
        done = {row["name"]: row["checksum"] for row in rows}
        for migration in migrations:
            if migration.name in done:
                if done[migration.name] != migration.checksum:
                    raise MigrationError(f"{schema}/{migration.name} changed after it was applied")
                continue
            await conn.execute(f"SET LOCAL search_path TO {schema}, public")
            await conn.execute(migration.sql)
            await conn.execute(
                f"INSERT INTO {schema}.schema_migrations (version, name, checksum)"  # noqa: S608
                " VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
            applied.append(migration.name)
    return applied
