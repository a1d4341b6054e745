"""The CLI against a real gateway over HTTP: `gpux signup --login` saves the new key as the
profile, `keys create|list|revoke` (twice: the same answer) run on it alone, and `gpux logout`
forgets it. Buying with `gpux order buy --wait` on a profile is the whole chain's test:
tests/integration/test_cli_order_wait_flow.py.

The commands run in a worker thread (the gateway shares this test's event loop).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from gpux_devinfra import profiles
from gpux_devinfra.profiles import Profile
from gpux_devinfra.testing.cli import line_with
from gpux_devinfra.testing.cli import run_in_thread as gpux
from gpux_devinfra.testing.services import Running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.settings import GpuxSettings


@pytest.fixture(scope="module")
async def gateway(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """The gateway alone: accounts and keys are its own."""
    async with stack(module_settings, GATEWAY) as up:
        yield up["gateway"]


async def test_signup_keys_and_logout(gateway: Running) -> None:
    signup = await gpux("signup", "CLI Seller", "--role", "seller", "--login", "--api", gateway.url)
    assert signup.exit_code == 0, signup.output
    first_key = profiles.load().key
    assert first_key is not None
    assert first_key in line_with(signup.stdout, "shown only now")

    made = await gpux("keys", "create", "--name", "ci", "--scope", "read")
    assert made.exit_code == 0, made.output
    key_id = line_with(made.stdout, "(ci;").split()[1]
    listed = await gpux("keys", "list")
    assert key_id in listed.stdout
    assert "ci" in line_with(listed.stdout, key_id)

    revoked = await gpux("keys", "revoke", key_id)
    assert revoked.exit_code == 0, revoked.output
    listed = await gpux("keys", "list", "--json")
    revoked_at = {k["id"]: k["revoked_at"] for k in json.loads(listed.stdout)}
    assert revoked_at[key_id] is not None
    assert [k for k, at in revoked_at.items() if at is None] == [first_key.split("_")[1]]
    again = await gpux("keys", "revoke", key_id)
    assert (again.exit_code, again.stdout.strip()) == (0, f"key {key_id} revoked")

    assert (await gpux("logout")).exit_code == 0
    assert profiles.load() == Profile(gateway.url, None)
    assert (await gpux("whoami")).exit_code == 1
