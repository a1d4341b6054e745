"""The ledger state machine of ``tests/unit/test_billing_ledger_stateful.py`` against PostgreSQL.

Hypothesis drives rules synchronously, so the machine runs in a worker thread with its own
event loop and connection. Each example runs in its own transaction, rolled back at its end,
with owners of its own; each post runs in a savepoint, so an expected refusal (insufficient
funds, a changed replay) leaves the example's transaction usable, as a handler would.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.bootstrap import MIGRATIONS
from gpux_devinfra.testing.modules import load_path
from gpux_platform import migrations
from gpux_platform.settings import GpuxSettings


def _machine_module() -> ModuleType:
    """The unit tier's machine module (test modules are not importable packages here)."""
    path = Path(__file__).parents[1] / "unit" / "test_billing_ledger_stateful.py"
    return load_path("gpux_billing_tests_ledger_machine", path)


@pytest.fixture(scope="module")
async def migrated(gpux_settings: GpuxSettings) -> str:
    dsn = gpux_settings.database_url.get_secret_value()
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
    try:
        await migrations.apply(pool, "billing", MIGRATIONS)
    finally:
        await pool.close()
    return dsn


def run_against_postgres(dsn: str, max_examples: int, steps: int) -> None:
    """Run the machine in this (worker) thread, on a loop and a connection of its own."""
    machine = _machine_module()
    with asyncio.Runner() as runner:
        conn: asyncpg.Connection = runner.run(asyncpg.connect(dsn))
        try:

            def open_backend() -> object:
                transaction = conn.transaction()
                runner.run(transaction.start())
                return machine.Backend(
                    PostgresLedger(conn),
                    runner.run,
                    conn.transaction,
                    lambda: runner.run(transaction.rollback()),
                )

            machine.run_machine(open_backend, max_examples=max_examples, stateful_step_count=steps)
        finally:
            runner.run(conn.close())


async def test_the_postgres_ledger_keeps_every_invariant(migrated: str) -> None:
    await asyncio.to_thread(run_against_postgres, migrated, 25, 20)
