"""Process, package and path helpers for the local launcher."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

console = Console(stderr=True)


class InfraError(RuntimeError):
    """The local infrastructure cannot be brought up; the message says what to do."""


def repo_root() -> Path:
    """The checkout this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[4]


def state_dir() -> Path:
    """Where jars, data, logs and pid files live (``GPUX_HOME`` or ``<repo>/.gpux``)."""
    path = Path(os.environ.get("GPUX_HOME") or repo_root() / ".gpux")
    path.mkdir(parents=True, exist_ok=True)
    return path


def is_root() -> bool:
    """Whether this process runs as root."""
    return os.geteuid() == 0


def _apt_env() -> dict[str, str]:
    return {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


@functools.cache
def _update_package_lists(prefix: tuple[str, ...]) -> None:
    """``apt-get update``, once per process (a failed update is tried again next time)."""
    run([*prefix, "apt-get", "update", "-qq"], env=_apt_env())


def apt_install(*packages: str) -> None:
    """Install Debian packages (as root, or through sudo), updating the lists once."""
    prefix: tuple[str, ...] = ()
    if not is_root():
        if shutil.which("sudo") is None:
            raise InfraError(f"install {' '.join(packages)} (apt-get) and run again")
        prefix = ("sudo", "-n")
    env = _apt_env()
    with console.status(f"installing {' '.join(packages)} from Debian's packages"):
        _update_package_lists(prefix)
        run(
            [*prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
            env=env,
        )
    console.print(f"[green]installed[/] {' '.join(packages)}")


def run(
    cmd: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure raise InfraError with the tail of its output."""
    proc = subprocess.run(  # noqa: S603 - commands are built from fixed parts
        list(cmd), env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise InfraError(f"{' '.join(cmd[:3])} … failed ({proc.returncode}):\n" + "\n".join(tail))
    return proc


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and ") Z " in stat.read_text())


def read_pid(path: Path) -> int | None:
    """The pid in a pid file whose process is alive, else None."""
    try:
        pid = int(path.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None
    return pid if pid_alive(pid) else None


def stop_pid(pid: int, timeout_s: float = 30.0) -> None:
    """SIGTERM a process (group), wait, then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
            time.sleep(0.1)


def wait_until(check: object, timeout_s: float, what: str) -> None:
    """Poll ``check()`` until it returns True or the time is up."""
    assert callable(check)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise InfraError(f"{what} did not become ready within {timeout_s:.0f} s")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on the port."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0
