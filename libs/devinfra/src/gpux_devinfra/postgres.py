"""PostgreSQL from Debian's packages, our own cluster on loopback (not the system service)."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gpux_devinfra.system import (
    InfraError,
    apt_install,
    console,
    is_root,
    pid_alive,
    repo_root,
    run,
    state_dir,
    wait_until,
)

PORT = 25432
USER = "gpux"
PASSWORD = "gpux"  # noqa: S105 - a development cluster on loopback only
DATABASE = "gpux"


@dataclass(frozen=True)
class Cluster:
    """One PostgreSQL cluster of ours: the port it answers on and the directory it lives in.

    The default is the shared development cluster (``gpux infra``); tests that restart a
    store run a private one on another port and directory (``gpux_devinfra.testing.stores``).
    """

    port: int = PORT
    directory: Path | None = None
    """Where the cluster's data, socket and log live (None: ``home()``)."""

    @property
    def home(self) -> Path:
        """The cluster's directory."""
        return home() if self.directory is None else self.directory

    @property
    def data(self) -> Path:
        """The data directory (``initdb``'s)."""
        return self.home / "data"


SHARED = Cluster()
"""The development cluster on ``PORT`` under the state directory."""


def _bin_dir() -> Path:
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3])
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    apt_install("postgresql")
    return _bin_dir()


def _runas() -> list[str]:
    # initdb and postgres refuse to run as root; Debian's package made the postgres user.
    return ["runuser", "-u", "postgres", "--"] if is_root() else []


@functools.cache
def home() -> Path:
    """Where the cluster lives: the state dir, or /tmp when the postgres user cannot reach it."""
    home = state_dir() / "postgres"
    if is_root():
        probe = subprocess.run(  # noqa: S603
            ["runuser", "-u", "postgres", "--", "test", "-x", str(home.parent)],  # noqa: S607
            check=False,
        )
        if probe.returncode != 0:
            tag = hashlib.sha256(str(repo_root()).encode()).hexdigest()[:10]
            home = Path(tempfile.gettempdir()) / f"gpux-postgres-{tag}"
    home.mkdir(parents=True, exist_ok=True)
    if is_root():
        shutil.chown(home, "postgres", "postgres")
    return home


def answers(cluster: Cluster = SHARED) -> bool:
    """Whether our cluster accepts connections."""
    ready = _bin_dir() / "pg_isready"
    proc = subprocess.run(  # noqa: S603
        [str(ready), "-h", "127.0.0.1", "-p", str(cluster.port), "-q"], check=False
    )
    return proc.returncode == 0


def pid(cluster: Cluster = SHARED) -> int | None:
    """The postmaster's pid when our cluster runs."""
    pidfile = cluster.data / "postmaster.pid"
    try:
        value = int(pidfile.read_text().splitlines()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None
    return value if pid_alive(value) else None


def url(database: str = DATABASE, cluster: Cluster = SHARED) -> str:
    """A connection URL for one database of our cluster."""
    return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{cluster.port}/{database}"


def _initdb(bins: Path, cluster: Cluster) -> None:
    pwfile = cluster.home / "pwfile"
    pwfile.write_text(PASSWORD + "\n")
    if is_root():
        shutil.chown(pwfile, "postgres", "postgres")
    run(
        [
            *_runas(),
            str(bins / "initdb"),
            "-D",
            str(cluster.data),
            "-U",
            USER,
            "--pwfile",
            str(pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        ]
    )
    pwfile.unlink()


def up(cluster: Cluster = SHARED) -> str:
    """Start our cluster unless it runs; create the dev database; returns its URL."""
    if pid(cluster) is None:
        if answers(cluster):
            raise InfraError(f"port {cluster.port} is taken by a PostgreSQL that is not ours")
        with console.status("starting PostgreSQL"):
            if not (cluster.data / "PG_VERSION").exists():
                _initdb(_bin_dir(), cluster)
            start(cluster)
    wait_until(lambda: answers(cluster), 60, "PostgreSQL")
    create_database(DATABASE, cluster)
    return url(cluster=cluster)


def start(cluster: Cluster = SHARED) -> None:
    """Start an initialised cluster and wait until it answers (``pg_ctl start -w``)."""
    options = (
        f"-p {cluster.port} -c listen_addresses=127.0.0.1 -k {cluster.home}"
        " -c max_connections=300 -c shared_buffers=128MB -c fsync=off -c full_page_writes=off"
    )
    run(
        [
            *_runas(),
            str(_bin_dir() / "pg_ctl"),
            "-D",
            str(cluster.data),
            "-l",
            str(cluster.home / "postgres.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        ]
    )


def create_database(name: str, cluster: Cluster = SHARED) -> None:
    """Create a database in our cluster unless it exists."""
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    psql = [
        str(_bin_dir() / "psql"),
        "-h",
        "127.0.0.1",
        "-p",
        str(cluster.port),
        "-U",
        USER,
        "-d",
        "postgres",
        "-tAq",
    ]
    query = f"SELECT 1 FROM pg_database WHERE datname = '{name}'"  # noqa: S608 - our own names
    exists = run([*psql, "-c", query], env=env)
    if exists.stdout.strip() != "1":
        run([*psql, "-c", f'CREATE DATABASE "{name}"'], env=env)


def down(cluster: Cluster = SHARED, mode: str = "fast") -> bool:
    """Stop our cluster if it runs (``pg_ctl stop -m mode``: ``fast`` ends every session,
    ``immediate`` is a crash); returns whether something was stopped."""
    if pid(cluster) is None:
        return False
    run([*_runas(), str(_bin_dir() / "pg_ctl"), "-D", str(cluster.data), "-m", mode, "-w", "stop"])
    return True
