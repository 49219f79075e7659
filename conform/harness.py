"""The Java harness as a process: Kafka's jars found (Maven Central through ``mvn``, or a
contributor's own build), the harness compiled against them with ``javac``, one JVM started, and
requests and answers exchanged as JSON lines over its standard input and output.

Nothing here knows the model: requests and answers are plain dicts (the protocol is in
``harness/README.md``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from importlib import resources
from pathlib import Path

#: The Kafka release the harness runs when none is named: the one closest to the controller code
#: the model was read from.
DEFAULT_KAFKA_VERSION = "4.0.0"
#: The newest Kafka release Maven Central serves here.
NEWEST_KAFKA_VERSION = "4.4.0"
MAIN_CLASS = "org.apache.kafka.controller.ConformanceHarness"
#: How long the JVM may take to start, and to answer one request, in seconds.
START_TIMEOUT_S = 120
#: The Maven run that resolves a Kafka version's jars (the first one downloads them into ~/.m2).
MAVEN_TIMEOUT_S = 900


class HarnessUnavailable(Exception):
    """The harness cannot run here: java, javac or Maven missing, a Kafka version Maven cannot
    resolve, a classpath that holds no Kafka controller.  One line; the CLI exits 2."""


class HarnessFailed(Exception):
    """The harness process died or answered something that is not the protocol."""


def harness_dir() -> Path:
    """The harness's Maven project, as installed with kraftcheck."""
    return Path(str(resources.files("kraftcheck.harness")))


def _sources() -> list[Path]:
    return sorted((harness_dir() / "src" / "main" / "java" / "org" / "apache" / "kafka" / "controller").glob("*.java"))


def cache_dir() -> Path:
    base = os.environ.get("KRAFTCHECK_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                              os.path.expanduser("~/.cache"), "kraftcheck")
    return Path(base) / "harness"


def require_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        why = {"mvn": "Maven ('mvn') is needed to fetch Kafka's jars (or pass --kafka-classpath)",
               "java": "Java ('java', 17 or later) is needed to run Kafka's controller",
               "javac": "a JDK ('javac') is needed to compile the harness"}[name]
        raise HarnessUnavailable(f"{why}, and it is not on PATH")
    return found


def maven_classpath(version: str, profile: str | None = None) -> list[str]:
    """Kafka ``version``'s controller jars and their dependencies, resolved by Maven (into
    ~/.m2 the first time); cached per version.  ``profile="server"`` adds Kafka's server
    (``kafka_2.13``) and a console logger: what a real broker or controller process runs."""
    if not version.replace(".", "").replace("-", "").isalnum() or len(version) > 40:
        raise HarnessUnavailable(f"not a Kafka version: {version!r}")
    what = "server" if profile == "server" else "controller"
    target = cache_dir() / (f"classpath-{profile}-{version}.txt" if profile else f"classpath-{version}.txt")
    if target.is_file():
        entries = target.read_text().strip().split(os.pathsep)
        if all(os.path.exists(e) for e in entries):
            return entries
    mvn = require_tool("mvn")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        out = Path(scratch) / "classpath.txt"
        command = [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(harness_dir() / "pom.xml"), f"-Dkafka.version={version}",
                   *([f"-P{profile}"] if profile else []), "dependency:build-classpath", f"-Dmdep.outputFile={out}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, cwd=scratch)
        except subprocess.TimeoutExpired:
            raise HarnessUnavailable(f"Maven did not resolve Kafka {version}'s {what} jars within {MAVEN_TIMEOUT_S} s") from None
        if done.returncode != 0 or not out.is_file():
            said = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
            missing = re.search(r"could not be resolved: ([\w.:-]+)", said)
            if missing:
                raise HarnessUnavailable(f"Maven could not resolve Kafka {version}'s {what} jars ({missing.group(1)} and "
                                         "others): no such release, or Maven Central out of reach")
            errors = [line.strip() for line in said.splitlines() if "ERROR" in line]
            raise HarnessUnavailable(f"Maven could not resolve Kafka {version}'s {what} jars: "
                                     f"{(errors[0] if errors else f'exit {done.returncode}')[:300]}")
        text = out.read_text().strip()
        os.replace(out, target)
    return text.split(os.pathsep)


def prefetch(versions=(DEFAULT_KAFKA_VERSION, NEWEST_KAFKA_VERSION)) -> None:
    """Resolve each version's jars into ~/.m2 now (``make``: conform's and cluster's tests then
    start at once)."""
    for version in versions:
        print(f"Kafka {version}'s controller: {len(maven_classpath(version))} jars, via Maven")
        print(f"Kafka {version}'s server: {len(maven_classpath(version, 'server'))} jars, via Maven")


def given_classpath(path: str) -> list[str]:
    """A contributor's Kafka: a directory of jars (a Kafka distribution's ``libs/``, or a build's
    ``dependant-libs``), or a classpath of jars and directories."""
    entries: list[str] = []
    for part in path.split(os.pathsep):
        if not part:
            continue
        p = Path(part)
        if p.is_dir() and any(p.glob("*.jar")):
            entries += sorted(str(j) for j in p.glob("*.jar"))
        elif p.exists():
            entries.append(str(p))
        else:
            raise HarnessUnavailable(f"--kafka-classpath: no such file or directory: {part}")
    if not any("kafka-metadata" in Path(e).name or (Path(e) / "org/apache/kafka/controller").is_dir()
               for e in entries):
        raise HarnessUnavailable(f"--kafka-classpath: no kafka-metadata jar (Kafka's controller) in {path}")
    return entries


def compiled(classpath: list[str]) -> Path:
    """The harness's classes compiled against ``classpath``, cached by sources and jars."""
    javac = require_tool("javac")
    digest = hashlib.sha256()
    for source in _sources():
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for entry in classpath:
        stat = os.stat(entry)
        digest.update(f"{entry}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    target = cache_dir() / f"classes-{digest.hexdigest()[:16]}"
    if (target / "org" / "apache" / "kafka" / "controller" / "ConformanceHarness.class").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix="compiling-"))
    done = subprocess.run([javac, "--release", "17", "-nowarn", "-d", str(scratch), "-cp", os.pathsep.join(classpath),
                           *map(str, _sources())], capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        first = next((line for line in done.stderr.splitlines() if "error:" in line), done.stderr.strip()[:300])
        raise HarnessUnavailable(f"the harness does not compile against these Kafka jars: {first}")
    try:
        os.rename(scratch, target)
    except OSError:  # another process compiled the same classes first
        shutil.rmtree(scratch, ignore_errors=True)
    return target


class Harness:
    """One JVM running Kafka's controller; :meth:`request` sends one request and waits for its answer."""

    def __init__(self, kafka_version: str | None = None, kafka_classpath: str | None = None,
                 main_class: str = MAIN_CLASS):
        java = require_tool("java")
        classpath = given_classpath(kafka_classpath) if kafka_classpath else maven_classpath(kafka_version or DEFAULT_KAFKA_VERSION)
        classes = compiled(classpath)
        self.process = subprocess.Popen(
            [java, "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
             os.pathsep.join([str(classes), *classpath]), main_class],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self._stderr_tail: deque[str] = deque(maxlen=20)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        ready = self._read(START_TIMEOUT_S)
        if not ready.get("ready"):
            self.close()
            raise HarnessFailed(f"the harness did not start: {ready}")
        self.kafka_version: str = ready.get("kafkaVersion", "unknown")
        self.requests = 0

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self._stderr_tail.append(line.rstrip())

    def _read(self, timeout: float) -> dict:
        # One answer per request, so nothing is ever buffered beyond the line awaited: waiting on
        # the pipe itself is enough.
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise HarnessFailed(f"the harness did not answer within {timeout:.0f} s")
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait(timeout=10)
            tail = "; ".join(list(self._stderr_tail)[-3:])
            raise HarnessFailed(f"the harness exited ({code}){': ' + tail if tail else ''}")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise HarnessFailed(f"the harness answered something that is not JSON: {line[:200]!r}") from None

    def request(self, message: dict, timeout: float = START_TIMEOUT_S) -> dict:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self.process.poll()
            raise HarnessFailed(f"the harness is gone (exit {code})") from None
        self.requests += 1
        answer = self._read(timeout)
        if answer.get("ok") is False:
            raise HarnessFailed(f"the harness could not carry out {message.get('op')}: "
                                f"{answer.get('fatal') or answer.get('badRequest')}")
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "Harness":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
