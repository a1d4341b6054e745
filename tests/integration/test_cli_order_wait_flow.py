"""`gpux login` then `gpux order buy --wait` against the real chain (catalog, pricing, matching,
billing, gateway), as a buyer would run them after `make up`.

The CLI runs as its console script would (typer's runner, the network through ``gpux_sdk``)
in a thread beside the in-process services: a key the gateway refuses saves nothing; the
buyer logs in once (the key on stdin) with a fresh ``XDG_CONFIG_HOME``, so `whoami`, the
order and `leases` after it name neither key nor gateway. A seller's offer is pushed with the
CLI too; the buyer's order is followed on its event stream until it is filled (exit 0), each
fill told before the final status, and a buyer who never topped up sees its order rejected,
and why (exit 1). (Signup, keys and logout: libs/devinfra/tests/integration/test_cli_flow.py.)
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import httpx
import pytest
from typer.testing import Result

from gpux_devinfra.testing.cli import isolate_profiles, run_in_thread
from gpux_devinfra.testing.http import account, auth, dev_top_up
from gpux_devinfra.testing.http import get_until as until

GPU = "rtx-4090"
BUY = ["order", "buy", "--gpu", GPU, "--gpus", "1", "--currency", "EUR", "--limit", "0.50"]
BUY += ["--hours", "1", "--tier", "on_demand"]
ORDER_LINE = re.compile(r"^order (\w+): ")


async def gpux(*args: str, config_home: Path, stdin: str | None = None) -> Result:
    """``gpux ARGS`` with profiles under ``config_home``, off the event loop (the services
    under test run on it)."""
    return await run_in_thread(*args, env={"XDG_CONFIG_HOME": str(config_home)}, stdin=stdin)


@pytest.fixture
def config_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh ``XDG_CONFIG_HOME``, and no GPUX_API_* variable of the developer's."""
    home = tmp_path / "config"
    isolate_profiles(monkeypatch, home)
    return home


async def _offer(client: httpx.AsyncClient, config_home: Path) -> None:
    """A seller offers 2 GPUs at 0.40 EUR with the CLI; back once the offer is live."""
    seller = await account(client, "seller")
    args = ["offer", "push", "--gpu", GPU, "--gpus", "2", "--price", "0.40", "--currency", "EUR"]
    args += ["--tier", "on_demand", "--billing", "hour", "--provisioning-timeout", "0"]
    pushed = await gpux(
        *args, "--json", "--key", seller, "--api", str(client.base_url), config_home=config_home
    )
    assert pushed.exit_code == 0, pushed.output
    offer_id = re.search(r'"id": "(\w+)"', pushed.stdout)
    assert offer_id is not None, pushed.stdout
    live = await until(
        client, f"/v1/offers/{offer_id[1]}", lambda o: o["status"] == "live", key=seller
    )
    assert live["status"] == "live", live


async def _login(client: httpx.AsyncClient, key: str, config_home: Path) -> None:
    url = str(client.base_url)
    logged_in = await gpux(
        "login", "--with-token", "--api", url, config_home=config_home, stdin=f"{key}\n"
    )
    assert logged_in.exit_code == 0, logged_in.output
    assert logged_in.stdout.startswith(f"logged in to {url} as "), logged_in.stdout
    saved = config_home / "gpux" / "config.toml"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert key in saved.read_text()


async def test_login_then_order_buy_wait_ends_filled(
    chain: httpx.AsyncClient, config_home: Path
) -> None:
    await _offer(chain, config_home)
    buyer = await account(chain, "buyer")
    await dev_top_up(chain, buyer, "100.00", "EUR")
    url = str(chain.base_url)
    refused = await gpux("login", "--key", "gpx_not_a_key", "--api", url, config_home=config_home)
    assert refused.exit_code == 1
    assert not (config_home / "gpux" / "config.toml").exists()
    await _login(chain, buyer, config_home)
    whoami = await gpux("whoami", config_home=config_home)
    assert whoami.exit_code == 0, whoami.output
    assert whoami.stdout.strip().endswith(f"; buyer) at {url}"), whoami.stdout

    bought = await gpux(*BUY, "--wait", "--timeout", "60", config_home=config_home)
    assert bought.exit_code == 0, bought.output
    lines = bought.stdout.splitlines()
    first = ORDER_LINE.match(lines[0])
    assert first is not None, bought.stdout
    order_id = first[1]
    assert lines[0] == f"order {order_id}: pending_funds, 0 of 1 GPUs filled"
    fills = [line for line in lines if line.startswith("  filled ")]
    assert len(fills) == 1, bought.stdout
    filled = r"  filled 1 GPU from offer \w+ at €0\.40/GPU-h: lease \S+"  # trade id: order:b1
    assert re.fullmatch(filled, fills[0]), fills
    assert lines[-1] == f"order {order_id}: filled, 1 of 1 GPUs filled"

    order = (await chain.get(f"/v1/orders/{order_id}", headers=auth(buyer))).json()
    assert order["status"] == "filled", order
    lease_id = fills[0].rsplit(" ", 1)[1]
    assert [f["trade_id"] for f in order["fills"]] == [lease_id]
    # The lease is listed once billing opened it: a moment after the fill the order shows.
    await until(chain, "/v1/leases", lambda b: b["items"], key=buyer)
    leases = await gpux("leases", "--json", config_home=config_home)
    assert leases.exit_code == 0, leases.output
    assert [(lease["lease_id"], lease["gpu"]) for lease in json.loads(leases.stdout)] == [
        (lease_id, GPU)
    ]


async def test_an_order_without_funds_ends_rejected_and_says_why(
    chain: httpx.AsyncClient, config_home: Path
) -> None:
    broke = await account(chain, "buyer")
    await _login(chain, broke, config_home)

    bought = await gpux(*BUY, "--wait", "--timeout", "60", config_home=config_home)
    assert bought.exit_code == 1, bought.output
    assert "rejected (insufficient_funds" in bought.stdout.splitlines()[-1]
    assert re.fullmatch(
        r"gpux: order \w+ rejected \(insufficient_funds, short €\d+\.\d\d\)",
        bought.stderr.strip(),
    ), bought.stderr
