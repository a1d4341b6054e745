"""Run the whole exchange locally: infrastructure, then every service as its own process.

``make up`` runs this. It waits until each service answers /readyz, prints the
gateway URL and stops every process it started on Ctrl-C (or SIGTERM).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import httpx

from gpux_devinfra import infra
from gpux_devinfra.system import InfraError, console, state_dir

SERVICES: tuple[tuple[str, int], ...] = (
    ("catalog", 8101),
    ("pricing", 8102),
    ("matching", 8103),
    ("billing", 8104),
    ("gateway", 8000),
)


@dataclass
class Running:
    """One service process we started."""

    name: str
    port: int
    process: subprocess.Popen[bytes]


def start(name: str, port: int, env: dict[str, str]) -> Running:
    """Start ``python -m gpux_<name>`` with its log in the state directory."""
    log = (state_dir() / "logs").joinpath(f"{name}.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", f"gpux_{name}"],
            env={**env, "GPUX_HTTP_PORT": str(port)},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return Running(name, port, process)


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


def main() -> None:
    """Bring everything up, print where it answers, stop it all on Ctrl-C."""
    infra_was_running = all(s.pid and s.answers for s in infra.status())
    endpoints = infra.up()
    env = {**os.environ, **endpoints.env()}
    running: list[Running] = []
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        with console.status("starting the services"):
            for name, port in SERVICES:
                running.append(start(name, port, env))
            for service in running:
                wait_ready(service)
        console.print("[bold green]gpux is running[/]")
        for service in running:
            console.print(f"  {service.name:<9} http://127.0.0.1:{service.port}")
        console.print("gateway: [bold]http://127.0.0.1:8000[/]  (OpenAPI at /docs); Ctrl-C stops")
        while all(s.process.poll() is None for s in running):
            time.sleep(0.5)
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
