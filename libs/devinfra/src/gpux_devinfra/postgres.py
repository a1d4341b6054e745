"""PostgreSQL from Debian's packages, our own cluster on loopback (not the system service)."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
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


def _data() -> Path:
    return home() / "data"


def answers() -> bool:
    """Whether our cluster accepts connections."""
    ready = _bin_dir() / "pg_isready"
    proc = subprocess.run(  # noqa: S603
        [str(ready), "-h", "127.0.0.1", "-p", str(PORT), "-q"], check=False
    )
    return proc.returncode == 0


def pid() -> int | None:
    """The postmaster's pid when our cluster runs."""
    pidfile = _data() / "postmaster.pid"
    try:
        value = int(pidfile.read_text().splitlines()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None
    return value if pid_alive(value) else None


def url(database: str = DATABASE) -> str:
    """A connection URL for one database of our cluster."""
    return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PORT}/{database}"


def _initdb(bins: Path, data: Path) -> None:
    pwfile = home() / "pwfile"
    pwfile.write_text(PASSWORD + "\n")
    if is_root():
        shutil.chown(pwfile, "postgres", "postgres")
    run(
        [
            *_runas(),
            str(bins / "initdb"),
            "-D",
            str(data),
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


def up() -> str:
    """Start our cluster unless it runs; create the dev database; returns its URL."""
    bins = _bin_dir()
    data = _data()
    if pid() is None:
        if answers():
            raise InfraError(f"port {PORT} is taken by a PostgreSQL that is not ours")
        with console.status("starting PostgreSQL"):
            if not (data / "PG_VERSION").exists():
                _initdb(bins, data)
            options = (
                f"-p {PORT} -c listen_addresses=127.0.0.1 -k {home()} -c max_connections=300"
                " -c shared_buffers=128MB -c fsync=off -c full_page_writes=off"
            )
            run(
                [
                    *_runas(),
                    str(bins / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(home() / "postgres.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            )
    wait_until(answers, 60, "PostgreSQL")
    create_database(DATABASE)
    return url()


def create_database(name: str) -> None:
    """Create a database in our cluster unless it exists."""
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    psql = [
        str(_bin_dir() / "psql"),
        "-h",
        "127.0.0.1",
        "-p",
        str(PORT),
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


def down() -> bool:
    """Stop our cluster if it runs; returns whether something was stopped."""
    if pid() is None:
        return False
    run([*_runas(), str(_bin_dir() / "pg_ctl"), "-D", str(_data()), "-m", "fast", "-w", "stop"])
    return True
