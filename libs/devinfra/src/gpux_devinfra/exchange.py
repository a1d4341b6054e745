"""Run the whole exchange locally: infrastructure, then every service as its own process.

``make up`` runs this. It waits until each service answers /readyz, loads the demo data set
through the gateway (sellers, offers, a funded buyer), prints the gateway URL and the demo
keys, then keeps a live best-ask table on screen; Ctrl-C (or SIGTERM) stops every process it
started. The gateway runs as two processes: ``gateway`` serves the API (role ``api``) and
``gateway-views`` keeps its PostgreSQL views (role ``views``), so reads never delay them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console

from gpux_devinfra import infra
from gpux_devinfra.demo.board import show_live
from gpux_devinfra.demo.loader import DemoError, DemoResult, load_demo
from gpux_devinfra.sdk_client import ApiError
from gpux_devinfra.system import InfraError, console, state_dir


@dataclass(frozen=True)
class Service:
    """One process of the exchange: its name, port, module and the settings of its role."""

    name: str
    port: int
    module: str
    env: Mapping[str, str] = field(default_factory=dict)


SERVICES: tuple[Service, ...] = (
    Service("catalog", 8101, "gpux_catalog"),
    Service("pricing", 8102, "gpux_pricing"),
    Service("matching", 8103, "gpux_matching"),
    Service("billing", 8104, "gpux_billing"),
    Service("gateway-views", 8105, "gpux_gateway", {"GPUX_GATEWAY_ROLE": "views"}),
    Service("gateway", 8000, "gpux_gateway", {"GPUX_GATEWAY_ROLE": "api"}),
)
GATEWAY_URL = "http://127.0.0.1:8000"


def service_env(base: Mapping[str, str], endpoints: infra.Endpoints) -> dict[str, str]:
    """What every service process gets: the caller's environment, the endpoints, demo defaults.

    `dev` top-ups are on unless the caller says otherwise (the demo buyer's credit is one). A
    faster clock (GPUX_CLOCK_SPEED) needs one epoch shared by every process: set it once here.
    """
    env = {**base, **endpoints.env()}
    env.setdefault("GPUX_DEV_TOPUPS", "true")
    if env.get("GPUX_CLOCK_SPEED", "1").strip() not in ("", "1") and not env.get(
        "GPUX_CLOCK_EPOCH"
    ):
        env["GPUX_CLOCK_EPOCH"] = datetime.now(UTC).isoformat()
    return env


def demo_keys_file() -> Path:
    """Where the demo's API keys are kept (a key can be read only when it is made)."""
    return state_dir() / "demo-keys.json"


@dataclass
class Running:
    """One service process we started."""

    name: str
    port: int
    process: subprocess.Popen[bytes]


def start(service: Service, env: dict[str, str]) -> Running:
    """Start ``python -m <module>`` with its role's settings, its log in the state directory."""
    log = (state_dir() / "logs").joinpath(f"{service.name}.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", service.module],
            env={**env, **service.env, "GPUX_HTTP_PORT": str(service.port)},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return Running(service.name, service.port, process)


def wait_ready(service: Running, timeout_s: float = 90.0) -> None:
    """Poll /readyz until 200; a process that exits early is an error."""
    deadline = time.monotonic() + timeout_s
    url = f"http://127.0.0.1:{service.port}/readyz"
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise InfraError(
                f"{service.name} exited ({service.process.returncode}); "
                f"see {state_dir() / 'logs' / (service.name + '.log')}"
            )
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise InfraError(f"{service.name} was not ready within {timeout_s:.0f} s")


def stop_all(running: list[Running]) -> None:
    """SIGTERM every service, then SIGKILL what has not exited after 15 s."""
    # A second Ctrl-C must not cut the shutdown short and leave processes behind.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for service in running:
        if service.process.poll() is None:
            service.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 15
    for service in running:
        remaining = max(0.1, deadline - time.monotonic())
        try:
            service.process.wait(remaining)
        except subprocess.TimeoutExpired:
            service.process.kill()


def load_demo_data(out: Console) -> DemoResult | None:
    """Load the demo data set and print its keys; a failure is reported, not fatal."""
    keys_file = demo_keys_file()
    try:
        with console.status("loading the demo data set") as status:
            demo = load_demo(
                GATEWAY_URL,
                keys_file=keys_file,
                progress=lambda step: status.update(f"loading the demo data set: {step}"),
            )
    except (DemoError, ApiError) as exc:
        out.print(f"[red]the demo data set was not loaded:[/] {exc}")
        return None
    out.print("[bold]demo API keys[/] (use one as GPUX_API_KEY):")
    for account in [demo.buyer, *demo.sellers]:
        out.print(f"  {account.role:<6} {account.name:<26} {account.api_key}", soft_wrap=True)
    done = f"{demo.offers_pushed} offers pushed" if demo.offers_pushed else "already loaded"
    credit = f", credited {', '.join(demo.topups)}" if demo.topups else ""
    out.print(f"demo: {done}{credit}; {demo.offers_live} offers live; keys in {keys_file}")
    # Not `login --key KEY`: a key on the command line stays in the shell's history.
    out.print("try: uv run gpux login (paste the buyer's key) && uv run gpux balance")
    return demo


def main() -> None:
    """Bring everything up, print where it answers, stop it all on Ctrl-C."""
    infra_was_running = all(s.pid and s.answers for s in infra.status())
    endpoints = infra.up()
    env = service_env(os.environ, endpoints)
    running: list[Running] = []
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    # A launcher that ignores SIGINT (a background job of a script) must not leave Ctrl-C dead.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with console.status("starting the services"):
            for service in SERVICES:
                running.append(start(service, env))
            for process in running:
                wait_ready(process)
        out = Console()
        out.print("[bold green]gpux is running[/]")
        for process in running:
            out.print(f"  {process.name:<13} http://127.0.0.1:{process.port}")
        demo = load_demo_data(out)
        out.print(f"gateway: [bold]{GATEWAY_URL}[/]  (OpenAPI at /docs); Ctrl-C stops")
        show_live(
            GATEWAY_URL,
            demo.gpus if demo else [],
            out,
            alive=lambda: all(s.process.poll() is None for s in running),
        )
        dead = [s.name for s in running if s.process.poll() is not None]
        console.print(f"[red]stopped unexpectedly:[/] {', '.join(dead)}")
        raise SystemExit(1)
    except InfraError as exc:
        console.print(f"[red]{exc}[/]")
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        console.print("stopping…")
    finally:
        stop_all(running)
        if not infra_was_running:
            console.print(f"stopped: {', '.join(infra.down())}")


if __name__ == "__main__":
    main()
