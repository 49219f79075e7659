"""A real Kafka cluster on loopback: one KRaft controller and N brokers, each broker with its own
log directories, run as separate JVMs from Kafka's server jars (Maven Central), and the faults
Kafka's own tests make.

Every process binds to 127.0.0.1 only, is started here and stopped here by its process ID.
Nothing here knows the model.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kraftcheck.conform.harness import DEFAULT_KAFKA_VERSION, maven_classpath, require_tool

#: The controller's node id, out of the brokers' range (Kafka's own KRaft tests use 3000).
CONTROLLER_ID = 3000
#: How long a process may take to listen on its port, in seconds.
START_TIMEOUT_S = 90
#: How long a killed process may take to go, in seconds.
STOP_TIMEOUT_S = 10


def read_directory_id(directory: Path) -> str | None:
    """The directory ID in a log directory's meta.properties (Kafka's base64 form), if any."""
    props = directory / "meta.properties"
    if not props.is_file():
        return None
    for line in props.read_text().splitlines():
        if line.startswith("directory.id="):
            return line.split("=", 1)[1].strip()
    return None


class ClusterFailed(Exception):
    """A process of the cluster did not start, or died where it should not have.  One line."""


@dataclass(frozen=True)
class ClusterSpec:
    """What the cluster is made of; broker ids are 0 .. brokers-1, as the model's."""

    brokers: int = 2
    dirs_per_broker: int = 2
    #: eligible leader replicas (KIP-966): the feature eligible.leader.replicas.version at 1 or 0
    elr: bool = True
    #: the metadata.version the cluster is formatted with; None: the release's latest
    metadata_version: str | None = None
    #: broker.session.timeout.ms: a broker that has not heartbeaten for this long is fenced
    session_timeout_ms: int = 4000
    #: broker.heartbeat.interval.ms
    heartbeat_interval_ms: int = 500
    #: replica.lag.time.max.ms: a follower that has not caught up for this long leaves the ISR.
    #: Kafka's default: the model abstracts the lag time as long enough for a follower that still
    #: fetches to catch up, and a shorter one lets a loaded machine (a move's copy, a busy core)
    #: push a fetching follower out and back in, two partition epochs the model never takes
    replica_lag_ms: int = 30000
    #: log.dir.failure.timeout.ms: a broker whose directory failure is unacknowledged this long stops
    dir_failure_timeout_ms: int = 30000
    #: replica.alter.log.dirs.io.max.bytes.per.second, set on every broker as a dynamic config
    #: once the cluster runs (Kafka reads it only so): a throttle that keeps a move going (0: none)
    move_throttle_bytes_per_s: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, log: Path, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ClusterFailed(f"{what} exited ({process.returncode}) while starting; its log: {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise ClusterFailed(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s; its log: {log}")


class LoopbackCluster:
    """Formats, starts and stops the cluster under ``workdir``; a context manager that leaves
    nothing running."""

    def __init__(self, workdir: Path, spec: ClusterSpec, kafka_version: str = DEFAULT_KAFKA_VERSION,
                 classpath: list[str] | None = None):
        self.workdir = Path(workdir)
        self.spec = spec
        self.kafka_version = kafka_version
        self.java = require_tool("java")
        self.classpath = classpath or maven_classpath(kafka_version, "server")
        self.controller_port = free_port()
        self.broker_ports = {b: free_port() for b in range(spec.brokers)}
        self.processes: dict[str | int, subprocess.Popen] = {}
        self.paused: set[int] = set()
        self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")

    # ------------------------------------------------------------------ layout

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.broker_ports.values())

    def metadata_log_dir(self) -> Path:
        """The controller's copy of the metadata log: what the controller has written."""
        return self.workdir / "controller" / "meta" / "__cluster_metadata-0"

    def dir_path(self, b: int, slot: int) -> Path:
        return self.workdir / f"broker{b}" / f"dir{slot}"

    def directory_id(self, b: int, slot: int) -> str | None:
        """The directory ID in the slot's meta.properties (Kafka's base64 form), if any; a
        failed directory's is read from where the fault put it aside."""
        return read_directory_id(self._aside(b, slot) if self.failed(b, slot) else self.dir_path(b, slot))

    def _common(self) -> list[str]:
        s = self.spec
        return [
            f"controller.quorum.voters={CONTROLLER_ID}@127.0.0.1:{self.controller_port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            f"broker.session.timeout.ms={s.session_timeout_ms}",
            f"broker.heartbeat.interval.ms={s.heartbeat_interval_ms}",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=false",
            "auto.leader.rebalance.enable=false",
        ]

    def _write_configs(self) -> dict[str | int, Path]:
        s = self.spec
        configs: dict[str | int, Path] = {}
        controller = self.workdir / "controller"
        controller.mkdir(parents=True, exist_ok=True)
        lines = self._common() + [
            "process.roles=controller", f"node.id={CONTROLLER_ID}",
            f"listeners=CONTROLLER://127.0.0.1:{self.controller_port}", f"log.dirs={controller / 'meta'}",
        ]
        configs["controller"] = controller / "server.properties"
        configs["controller"].write_text("\n".join(lines) + "\n")
        for b, port in self.broker_ports.items():
            home = self.workdir / f"broker{b}"
            home.mkdir(parents=True, exist_ok=True)
            dirs = ",".join(str(self.dir_path(b, slot)) for slot in range(s.dirs_per_broker))
            lines = self._common() + [
                "process.roles=broker", f"node.id={b}",
                f"listeners=PLAINTEXT://127.0.0.1:{port}", f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                "inter.broker.listener.name=PLAINTEXT", f"log.dirs={dirs}",
                # the metadata log apart from the data directories, so that every data directory
                # may fail as the model's do (a failed metadata directory stops the broker)
                f"metadata.log.dir={home / 'meta'}",
                f"replica.lag.time.max.ms={s.replica_lag_ms}",
                f"log.dir.failure.timeout.ms={s.dir_failure_timeout_ms}",
                # checkpoints touch every directory each second, so a failed one is seen at once
                "log.flush.offset.checkpoint.interval.ms=1000",
                "replica.high.watermark.checkpoint.interval.ms=1000",
                "log.flush.start.offset.checkpoint.interval.ms=1000",
                "unclean.leader.election.enable=false",
            ]
            configs[b] = home / "server.properties"
            configs[b].write_text("\n".join(lines) + "\n")
        return configs

    # ------------------------------------------------------------------ lifecycle

    def _java(self, *args: str) -> list[str]:
        return [self.java, "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true", "-cp", os.pathsep.join(self.classpath), *args]

    def format(self) -> None:
        """kafka-storage.sh format, for the controller and every broker."""
        self.configs = self._write_configs()
        for node in self.configs:
            self._format(node)

    def _format(self, node: str | int, ignore_formatted: bool = False) -> None:
        features = ["--feature", f"eligible.leader.replicas.version={1 if self.spec.elr else 0}"]
        release = ["--release-version", self.spec.metadata_version] if self.spec.metadata_version else []
        done = subprocess.run(self._java("kafka.tools.StorageTool", "format", f"--cluster-id={self.cluster_id}",  # "=": an ID may start with "-"
                                         "-c", str(self.configs[node]), *release, *features,
                                         *(["--ignore-formatted"] if ignore_formatted else [])),
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise ClusterFailed(f"kafka-storage format failed for {node}: {said[-1] if said else done.returncode}")

    def start(self) -> None:
        self.format()
        self._start_node("controller", self.controller_port)
        for b in self.broker_ports:
            self.start_broker(b)

    def _start_node(self, node: str | int, port: int) -> None:
        log = self.log_path(node)
        with open(log, "ab") as out:
            process = subprocess.Popen(self._java("kafka.Kafka", str(self.configs[node])), stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes[node] = process
        wait_for_port(port, process, "the controller" if node == "controller" else f"broker {node}", log)

    def log_path(self, node: str | int) -> Path:
        return self.workdir / ("controller.log" if node == "controller" else f"broker{node}.log")

    def running(self, b: int) -> bool:
        process = self.processes.get(b)
        return process is not None and process.poll() is None

    def start_broker(self, b: int) -> None:
        if self.running(b):
            raise ClusterFailed(f"broker {b} is already running")
        self._start_node(b, self.broker_ports[b])

    def kill(self, b: int) -> None:
        """SIGKILL: the broker stops at once, with no controlled shutdown."""
        process = self.processes.get(b)
        if process is None or process.poll() is not None:
            raise ClusterFailed(f"broker {b} is not running")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT_S)
        self.paused.discard(b)

    def pause(self, b: int) -> None:
        """SIGSTOP: the process stays, and neither heartbeats nor answers."""
        if not self.running(b):
            raise ClusterFailed(f"broker {b} is not running")
        self.processes[b].send_signal(signal.SIGSTOP)
        self.paused.add(b)

    def resume(self, b: int) -> None:
        if b not in self.paused:
            raise ClusterFailed(f"broker {b} is not paused")
        self.processes[b].send_signal(signal.SIGCONT)
        self.paused.discard(b)

    def _aside(self, b: int, slot: int) -> Path:
        return self.workdir / f"broker{b}" / f"dir{slot}.failed"

    def fail_dir(self, b: int, slot: int) -> None:
        """The directory becomes a file, as Kafka's LogDirFailureTest makes a directory fail: the
        broker's next write there (a checkpoint, within a second) fails.  The directory itself
        is kept aside, for a repair."""
        path = self.dir_path(b, slot)
        if not path.is_dir():
            raise ClusterFailed(f"broker {b}'s directory {slot} has already failed")
        path.rename(self._aside(b, slot))
        path.write_text("")

    def failed(self, b: int, slot: int) -> bool:
        return self.dir_path(b, slot).is_file()

    def repair_dir(self, b: int, slot: int) -> None:
        """The failed directory back as it was (the disk remounted), while the broker is down."""
        self._down_and_failed(b, slot)
        self.dir_path(b, slot).unlink()
        self._aside(b, slot).rename(self.dir_path(b, slot))

    def replace_disk(self, b: int, slot: int) -> None:
        """A new, empty disk in the failed directory's place, while the broker is down, formatted
        as an operator does (kafka-storage.sh format --ignore-formatted: only the new disk is
        written, with a fresh directory ID).  Kafka's broker refuses to start with an
        unformatted directory."""
        self._down_and_failed(b, slot)
        self.dir_path(b, slot).unlink()
        shutil.rmtree(self._aside(b, slot))
        self.dir_path(b, slot).mkdir()
        self._format(b, ignore_formatted=True)

    def _down_and_failed(self, b: int, slot: int) -> None:
        if self.running(b):
            raise ClusterFailed(f"broker {b} must be down for its directory {slot} to be repaired or replaced")
        if not self.failed(b, slot):
            raise ClusterFailed(f"broker {b}'s directory {slot} has not failed")

    def stop(self) -> None:
        """Every process, by its ID, with SIGKILL (a paused one too): the run is over and its
        data no longer matters, and a broker's controlled shutdown would only take longer."""
        for node in [n for n in self.processes if n != "controller"] + ["controller"]:
            process = self.processes.get(node)
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        self.paused.clear()

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes.values() if p.poll() is None]

    def __enter__(self) -> "LoopbackCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["CONTROLLER_ID", "ClusterFailed", "ClusterSpec", "LoopbackCluster", "read_directory_id"]
