"""Apache Kafka, single node in KRaft mode, from Maven Central jars, run with this machine's JVM."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from gpux_devinfra.system import (
    InfraError,
    apt_install,
    console,
    port_open,
    read_pid,
    repo_root,
    run,
    state_dir,
    stop_pid,
    wait_until,
)

PORT = 29092
CONTROLLER_PORT = 29093


@dataclass(frozen=True)
class KafkaPaths:
    """Where the broker's jars, data, config, log and pid file are."""

    home: Path
    jars: Path | None = None
    """The jars' directory when it is not ``home/libs`` (a private broker uses the shared ones)."""

    @property
    def libs(self) -> Path:
        return self.home / "libs" if self.jars is None else self.jars

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def config(self) -> Path:
        return self.home / "server.properties"

    @property
    def log(self) -> Path:
        return self.home / "server.log"

    @property
    def pid(self) -> Path:
        return self.home / "kafka.pid"


@dataclass(frozen=True)
class Broker:
    """One broker of ours: its client and controller ports and the directory it lives in.

    The default is the shared development broker (``gpux infra``); tests that restart a store
    run a private one on other ports and another directory (``gpux_devinfra.testing.stores``).
    """

    port: int = PORT
    controller_port: int = CONTROLLER_PORT
    directory: Path | None = None
    """Where data, config, log and pid file live (None: ``<state dir>/kafka``)."""

    @property
    def bootstrap(self) -> str:
        """The address clients connect to."""
        return f"127.0.0.1:{self.port}"


SHARED = Broker()
"""The development broker on ``PORT`` under the state directory."""


def paths(broker: Broker = SHARED) -> KafkaPaths:
    """The broker's paths (under the state directory unless it has a directory of its own)."""
    shared = state_dir() / "kafka"
    shared.mkdir(parents=True, exist_ok=True)
    if broker.directory is None:
        return KafkaPaths(shared)
    broker.directory.mkdir(parents=True, exist_ok=True)
    return KafkaPaths(broker.directory, jars=shared / "libs")


def _pom() -> Path:
    return repo_root() / "deploy" / "local" / "kafka" / "pom.xml"


def ensure_java() -> str:
    """The java and mvn commands, installed from Debian's packages when missing."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        apt_install("openjdk-17-jre-headless", "maven")
    java = shutil.which("java")
    if java is None:
        raise InfraError("java is not on PATH after installing openjdk-17-jre-headless")
    return java


def ensure_jars(p: KafkaPaths) -> None:
    """Fetch the broker's jars once (cached; fetched again only when the pom changes)."""
    pom = _pom()
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()
    marker = p.libs / ".pom-sha256"
    if marker.exists() and marker.read_text() == digest:
        return
    shutil.rmtree(p.libs, ignore_errors=True)
    with console.status("downloading the Kafka broker's jars from Maven Central (once)"):
        run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={p.libs}",
                "-DincludeScope=runtime",
            ]
        )
    marker.write_text(digest)
    console.print(f"[green]fetched[/] Kafka jars into {p.libs}")


def _write_config(p: KafkaPaths, broker: Broker) -> None:
    template = (repo_root() / "deploy" / "local" / "kafka" / "server.properties").read_text()
    text = (
        template.replace("@DATA@", str(p.data))
        .replace("@CONTROLLER_PORT@", str(broker.controller_port))
        .replace("@PORT@", str(broker.port))
    )
    p.config.write_text(text)


def _java_cmd(java: str, p: KafkaPaths, *args: str, heap: str = "-Xmx256m") -> list[str]:
    log4j = repo_root() / "deploy" / "local" / "kafka" / "log4j2.properties"
    return [
        java,
        heap,
        "-XX:+UseSerialGC",
        "-cp",
        f"{p.libs}/*",
        f"-Dlog4j2.configurationFile={log4j}",
        f"-Dgpux.kafka.log={p.log}",
        *args,
    ]


def _format_storage(java: str, p: KafkaPaths) -> None:
    if (p.data / "meta.properties").exists():
        return
    cluster_id = _cluster_id()
    run(
        _java_cmd(
            java, p, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(p.config)
        )
    )


def _cluster_id() -> str:
    # The storage tool wants a base64url-encoded UUID of 22 characters.
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def answers(bootstrap: str = f"127.0.0.1:{PORT}") -> bool:
    """Whether the broker answers a metadata request."""
    # Imported here: only `gpux infra` probes the broker, and every other command starts faster.
    from aiokafka.admin import AIOKafkaAdminClient  # noqa: PLC0415

    # While the broker starts, every probe fails by design: keep aiokafka from printing it.
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)

    async def probe() -> bool:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000)
        try:
            await admin.start()
            await admin.list_topics()
            return True
        except Exception:
            return False
        finally:
            await admin.close()

    return asyncio.run(probe())


def status(broker: Broker = SHARED) -> tuple[int | None, bool]:
    """Our broker's pid (if it runs) and whether its port answers metadata."""
    return read_pid(paths(broker).pid), port_open(broker.port) and answers(broker.bootstrap)


def up(broker: Broker = SHARED) -> str:
    """Start the broker unless ours already runs; returns the bootstrap address."""
    p = paths(broker)
    bootstrap = broker.bootstrap
    if read_pid(p.pid) is not None:
        wait_until(lambda: answers(bootstrap), 60, "Kafka")
        return bootstrap
    if port_open(broker.port):
        raise InfraError(f"port {broker.port} is taken by a process that is not our Kafka")
    java = ensure_java()
    ensure_jars(paths())
    _write_config(p, broker)
    _format_storage(java, p)
    with console.status("starting Kafka (KRaft, single node)"):
        with p.log.with_suffix(".out").open("ab") as out:
            proc = subprocess.Popen(  # noqa: S603
                _java_cmd(java, p, "kafka.Kafka", str(p.config), heap="-Xmx768m"),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        p.pid.write_text(str(proc.pid))

        def ready() -> bool:
            if proc.poll() is not None:
                raise InfraError(f"Kafka exited ({proc.returncode}); see {p.log}")
            return port_open(broker.port) and answers(bootstrap)

        wait_until(ready, 90, "Kafka")
    return bootstrap


def down(broker: Broker = SHARED) -> bool:
    """Stop our broker if it runs; returns whether something was stopped."""
    p = paths(broker)
    pid = read_pid(p.pid)
    if pid is None:
        return False
    stop_pid(pid)
    p.pid.unlink(missing_ok=True)
    return True
