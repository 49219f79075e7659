"""The Spark session the Spark engine runs in: local, a standalone cluster, Spark Connect or spark-submit.

A master URL is checked before Spark is started, so that a wrong one is a one-line error
within seconds instead of Spark's minutes of retries.  When the master is this machine
(``local[...]``, or a ``spark://`` / ``sc://`` address on loopback), the driver binds to
127.0.0.1 and nothing listens on another interface.

The executors' Python (:func:`pick_executor_python`) is the driver's own interpreter when the
master is on this machine, whose path the executors share; for a master elsewhere, where that
path means nothing, it is what the user or the cluster configured, and the command says which.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from .config import ConfigError
from .signals import received, reinstall

LOOPBACK = "127.0.0.1"
#: Seconds to wait for a standalone cluster to give the application an executor.
EXECUTOR_WAIT_S = 45.0
#: Seconds to wait for a TCP connection to a master.
CONNECT_TIMEOUT_S = 5.0
#: In local mode a failed task is retried once (Spark's default for local mode is never).
LOCAL_TASK_ATTEMPTS = 2
#: JVM options of a driver the engine starts (``spark.driver.defaultJavaOptions``, so that a
#: user's ``spark.driver.extraJavaOptions`` still apply).  The driver JVM lives as long as one
#: search, and C2's compilation of Spark's code cost as much CPU as it ever saved (about a
#: tenth of a two-core machine on the default config): C1 alone compiles fast enough to pay off.
DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
#: Shuffle settings of a session the engine starts.  What the engine shuffles is already
#: compressed (blocks of states, by the workers) or incompressible (fingerprints), so Spark's
#: own compression would only cost the JVM CPU; so would the checksums kept to diagnose a
#: corrupt shuffle file.
SHUFFLE_SETTINGS = {"spark.shuffle.compress": "false", "spark.shuffle.checksum.enabled": "false"}
#: The heap of a local session's driver, its only JVM, unless something else sets it: with
#: Spark's 1 GB, G1 runs concurrent cycles all through a search of a million states (over the
#: checkpointed level and the shuffle's buffers), a fifth of the JVM's CPU; with 2 GB, none.
LOCAL_DRIVER_MEMORY = "2g"
#: The environment of a local session's processes (the driver JVM and, through it, the Python
#: workers), each variable unless already set.  A level allocates its blocks afresh and frees
#: them at its end; by default both allocators hand the freed pages back to the kernel at once
#: (Arrow's mimalloc in the workers after 10 ms; glibc's malloc in the JVM for Arrow's and the
#: shuffle's buffers, which it maps and unmaps whole), so every level faults in and zeroes
#: them again.  Kept for reuse, a search of the Kafka model on local[2] takes 0.29 million page
#: faults in the workers instead of 1.1 million (2.4 s of kernel time instead of 4.4 s) and
#: half as many in the JVM (bench/spark_cpu.py), for a footprint that stays at its peak.
LOCAL_ALLOCATOR_ENV = {
    "MIMALLOC_PURGE_DELAY": "-1",
    "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824",
}
#: A Spark conf key that sets the number of fingerprint partitions.
PARTITIONS_KEY = "spark.kraftcheck.partitions"
#: A Spark conf key: after a level whose expansion generated at most this many transitions,
#: the next levels run in one task while they stay so narrow (0: every level a job of its own).
NARROW_KEY = "spark.kraftcheck.narrowLevel"
#: Its default: about where two cores gain on a level what a Spark job per level costs.
NARROW_TRANSITIONS = 25_000
#: The levels run in one task only while the visited set has at most this many states
#: (one worker holds them all: 24 bytes each).
ONE_TASK_VISITED = 4_000_000

_LOCAL = re.compile(r"^local(\[(?P<threads>\*|\d+)(,(?P<failures>\d+))?\])?$")
#: The largest count Spark reads from a master URL (a JVM int).
_JVM_INT_MAX = 2**31 - 1


@dataclass
class SparkHandle:
    """A session, what kind it is, and whether the engine started it (and so must stop it)."""

    spark: Any
    master: str
    kind: str  # "local", "standalone", "connect" or "other"
    owned: bool

    @property
    def is_connect(self) -> bool:
        return self.kind == "connect"

    def parallelism(self) -> int:
        if self.is_connect:
            return 2
        return max(1, self.spark.sparkContext.defaultParallelism)

    def interrupt(self) -> None:
        """Cancel whatever runs (Ctrl-C)."""
        try:
            if self.is_connect:
                self.spark.interruptAll()
            else:
                self.spark.sparkContext.cancelAllJobs()
        except Exception:
            pass

    def stop(self) -> None:
        if self.owned:
            try:
                with warnings.catch_warnings():
                    # pyspark warns when the JVM is gone already; stopping is all that is asked
                    warnings.simplefilter("ignore")
                    self.spark.stop()
            except Exception:
                pass


def resolve_master(master: str | None) -> str | None:
    """The master to use: the argument, else ``$SPARK_MASTER``, else None (spark-submit's, or local[*])."""
    return master or os.environ.get("SPARK_MASTER") or None


def with_local_retries(master: str) -> str:
    """``local[N]`` -> ``local[N,2]``: local mode retries a failed task only when told how often."""
    m = _LOCAL.match(master)
    if m is None:
        raise ConfigError(f"bad local master {master!r}: expected local, local[N], local[*] or local[N,F]")
    for name in ("threads", "failures"):
        count = m.group(name)
        if count not in (None, "*") and not 1 <= int(count) <= _JVM_INT_MAX:
            what = "threads" if name == "threads" else "task attempts"
            raise ConfigError(f"bad local master {master!r}: the number of {what} must be from 1 to {_JVM_INT_MAX}")
    if m.group("failures"):
        return master
    return f"local[{m.group('threads') or 1},{LOCAL_TASK_ATTEMPTS}]"


def check_master(master: str) -> None:
    """ConfigError for a master that Spark is known to reject, before Spark is started: a JVM
    that rejects it prints dozens of lines first.  Others are tried (see :class:`JvmOutput`)."""
    if master.startswith("local"):
        with_local_retries(master)
    elif not (master.startswith(("spark://", "sc://", "k8s://")) or master == "yarn"):
        raise ConfigError(f"bad Spark master {master!r}: expected local[N], spark://HOST:PORT, sc://HOST:PORT, "
                          "yarn or k8s://HOST:PORT")


def driver_memory_configured(environ) -> bool:
    """Whether the driver's memory is set for a session started from this environment: by
    ``SPARK_DRIVER_MEMORY``, ``PYSPARK_SUBMIT_ARGS`` or a ``spark-defaults.conf``."""
    if environ.get("SPARK_DRIVER_MEMORY"):
        return True
    submit_args = environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "--driver-memory" in submit_args or "spark.driver.memory" in submit_args:
        return True
    conf_dirs = [environ.get("SPARK_CONF_DIR"), os.path.join(environ.get("SPARK_HOME") or _pyspark_home(), "conf")]
    for conf_dir in filter(None, conf_dirs):
        try:
            with open(os.path.join(conf_dir, "spark-defaults.conf")) as defaults:
                if any(line.split()[:1] == ["spark.driver.memory"] for line in defaults):
                    return True
        except OSError:
            continue
    return False


def _pyspark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def _kind(master: str) -> str:
    if master.startswith("local"):
        return "local"
    if master.startswith("spark://"):
        return "standalone"
    return "other"


def _same_master(active, master: str) -> bool:
    running = active.sparkContext.master
    if master.startswith("local") and _LOCAL.match(master):
        return running == with_local_retries(master)
    return running == master


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_reachable(url: str, default_port: int) -> tuple[str, bool]:
    """Raise ConfigError unless some host:port of ``url`` accepts a TCP connection; return (host, loopback)."""
    parts = urlsplit(url.split(";", 1)[0].replace("sc://", "tcp://", 1))
    hosts = parts.netloc.split(",")  # spark://host1:port1,host2:port2 (standby masters)
    errors = []
    first_host = None
    for hostport in hosts:
        host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
        host = host.strip("[]") or hostport
        try:
            port_number = int(port) if port else default_port
        except ValueError:
            raise ConfigError(f"bad Spark master {url!r}: port {port!r} is not a number") from None
        first_host = first_host or host
        try:
            with socket.create_connection((host, port_number), timeout=CONNECT_TIMEOUT_S):
                return host, _is_loopback(host)
        except OSError as e:
            errors.append(f"{host}:{port_number}: {e.strerror or e}")
    raise ConfigError(f"cannot reach Spark master {url} ({'; '.join(errors)})")


#: The Spark setting of the executors' Python; spark-submit passes it on as ``PYSPARK_PYTHON``.
PYTHON_KEY = "spark.pyspark.python"
#: What Spark runs on executors when nothing says otherwise.
SPARK_DEFAULT_PYTHON = "python3"


def pick_executor_python(on_this_machine: bool, configured: str | None, environ) -> tuple[str, str | None]:
    """The Python the executors run, and where it comes from (None: the driver's own interpreter).

    ``configured`` is the session's ``spark.pyspark.python``, which Spark puts before
    ``PYSPARK_PYTHON``.  On this machine, unless one of them names another, it is the driver's
    own interpreter, which has kraftcheck.  Elsewhere that path means nothing: it is what was
    configured, else Spark's default."""
    if configured:
        return configured, PYTHON_KEY
    if environ.get("PYSPARK_PYTHON"):
        return environ["PYSPARK_PYTHON"], "PYSPARK_PYTHON"
    if on_this_machine:
        return sys.executable, None
    return SPARK_DEFAULT_PYTHON, f"Spark's default; set {PYTHON_KEY} or PYSPARK_PYTHON to choose"


def _use_executor_python(on_this_machine: bool, configured: str | None, say: Callable[[str], None] | None) -> None:
    """Set ``PYSPARK_PYTHON``, which PySpark sends the executors as the Python to run, before
    the SparkContext reads it; for a master elsewhere, say in one line what was chosen."""
    python, source = pick_executor_python(on_this_machine, configured, os.environ)
    os.environ["PYSPARK_PYTHON"] = python
    if not on_this_machine and say is not None:
        say(f"executors' Python: {python} ({source})")


def _on_this_machine(master: str) -> bool:
    """Whether the master is this machine: local mode, or a standalone master on loopback."""
    if master.startswith("local"):
        return True
    if master.startswith("spark://"):
        first = urlsplit(master.replace("spark://", "tcp://", 1)).netloc.split(",")[0]
        return _is_loopback(first.rpartition(":")[0].strip("[]") if ":" in first else first)
    return False


def quiet_pyspark_warnings() -> None:
    """Before pyspark is imported: pyspark warns about pandas versions it has not been tested
    with, and the engine uses Arrow only."""
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark\.")


def open_session(master: str | None, app_name: str = "kraftcheck",
                 say: Callable[[str], None] | None = None) -> SparkHandle:
    """Start (or join) the session for ``master``; ConfigError when it cannot be reached.
    ``say`` receives the one line naming the executors' Python when the master is elsewhere."""
    master = resolve_master(master)
    if master is not None:
        check_master(master)
    quiet_pyspark_warnings()

    if master is not None and master.startswith("sc://"):
        return _connect(master)

    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        # A session started by the caller (a notebook, a test): use it, leave it running.
        running = active.sparkContext.master
        if master is not None and not _same_master(active, master):
            raise ConfigError(f"a Spark session with master {running} is already running in this process, not {master}")
        return SparkHandle(active, running, _kind(running), owned=False)
    if master is None and os.environ.get("PYSPARK_GATEWAY_PORT"):
        # Inside spark-submit: its JVM is up with its master and conf; make the session from them.
        from pyspark import SparkConf, SparkContext

        with _keeping_sigint_handler():
            SparkContext._ensure_initialized()
            submitted = SparkConf()
            _use_executor_python(_on_this_machine(submitted.get("spark.master", "local[*]")),
                                 submitted.get(PYTHON_KEY, None), say)
            spark = SparkSession.builder.appName(app_name).getOrCreate()
        return SparkHandle(spark, spark.sparkContext.master, _kind(spark.sparkContext.master), owned=True)

    master = master or "local[*]"
    loopback = True
    kind = "other"
    if master.startswith("local"):
        master = with_local_retries(master)
        kind = "local"
    elif master.startswith("spark://"):
        _, loopback = _check_reachable(master, 7077)
        kind = "standalone"
    else:
        loopback = False

    options = {
        "spark.master": master,
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "ERROR",
        "spark.locality.wait": "0s",
        "spark.driver.defaultJavaOptions": DRIVER_JAVA_OPTIONS,
        **SHUFFLE_SETTINGS,
    }
    if kind == "local" and not driver_memory_configured(os.environ):
        options["spark.driver.memory"] = LOCAL_DRIVER_MEMORY
    if loopback:
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
        options["spark.driver.host"] = options["spark.driver.bindAddress"] = LOOPBACK
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    jvm_output = None
    try:
        with _environment(LOCAL_ALLOCATOR_ENV if kind == "local" else {}), _keeping_sigint_handler():
            jvm_output = _start_jvm(options, lambda conf: _use_executor_python(
                kind == "local" or (kind == "standalone" and loopback), conf.get(PYTHON_KEY, None), say))
            spark = builder.getOrCreate()
    except _StartFailed as e:
        raise ConfigError(f"cannot start Spark with master {master}: {e}") from None
    except Exception as e:
        reason = jvm_output.reason(e) if jvm_output is not None else _first_line(e)
        raise ConfigError(f"cannot start Spark with master {master}: {reason}") from None
    if jvm_output is not None:
        jvm_output.pass_on()
    handle = SparkHandle(spark, master, kind, owned=True)
    if kind == "standalone":
        _wait_for_executor(handle)
    return handle


@contextlib.contextmanager
def _keeping_sigint_handler():
    """The SIGINT handler in place before (the command line's: see .signals) kept while a
    SparkContext is made: Spark's own calls the JVM from inside the handler, on the
    connection the interrupted call is reading from, and py4j then prints tracebacks."""
    handler = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if handler is not None:
            reinstall(signal.SIGINT, handler)


@contextlib.contextmanager
def _environment(additions: dict[str, str]):
    """The variables of ``additions`` not set in this process's environment, set meanwhile:
    the JVM a session starts inherits them, and nothing else this process starts later."""
    added = [key for key in additions if key not in os.environ]
    for key in added:
        os.environ[key] = additions[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _connect(url: str) -> SparkHandle:
    _check_reachable(url, 15002)
    try:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote(url).getOrCreate()
        spark.range(1).collect()  # a round trip: fails now, not in the middle of the search
    except ImportError as e:
        raise ConfigError(f"Spark Connect needs packages that are missing: {e}") from None
    except Exception as e:
        raise ConfigError(f"cannot use Spark Connect server {url}: {_first_line(e)}") from None
    return SparkHandle(spark, url, "connect", owned=True)


def _wait_for_executor(handle: SparkHandle) -> None:
    """A standalone master may accept the application and never give it an executor (no
    worker, or no free cores): fail clearly instead of waiting for ever."""
    sc = handle.spark.sparkContext
    deadline = time.monotonic() + EXECUTOR_WAIT_S
    while time.monotonic() < deadline:
        # the driver's own block manager is counted too
        if sc._jsc.sc().getExecutorMemoryStatus().size() > 1:
            return
        time.sleep(0.25)
    handle.stop()
    raise ConfigError(
        f"no executor registered with Spark master {handle.master} within {EXECUTOR_WAIT_S:.0f} s "
        "(is a worker running, with free cores and memory?)"
    )


def _start_jvm(options: dict[str, str], before_context: Callable[[Any], None]) -> "JvmOutput | None":
    """Start the JVM of a new session (``spark-submit`` with ``options``), its output read
    through a :class:`JvmOutput`, in a process session of its own; None when this process
    has a JVM already (a session stopped earlier): Spark reuses it.  ``before_context``
    receives the JVM's conf (``options`` and a ``spark-defaults.conf``'s) before the
    SparkContext is made.

    In a session of its own, the JVM and its Python workers do not receive what a terminal
    sends the command's process group (Ctrl-C, a hang-up): the driver stops them itself, and
    a JVM whose driver is gone exits as its stdin closes."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        before_context(SparkConf())
        return None
    conf = SparkConf(loadDefaults=False)
    for key, value in options.items():
        conf.set(key, value)
    jvm_output = JvmOutput()
    launched: list[subprocess.Popen] = []
    children_before = _session_leading_children()
    try:
        with _recording_processes(launched):
            gateway = launch_gateway(conf, popen_kwargs={
                "stdout": jvm_output.write_fd, "stderr": jvm_output.write_fd, "start_new_session": True})
    except BaseException as e:
        jvm_output.close_write_end()
        # A JVM interrupted before it has started would never watch its stdin, the way a
        # started one learns that its driver is gone: it is stopped here, with the launcher.
        for process in launched:
            _stop_process_group(process)
        # A signal that lands while Popen runs, or just after it returns, leaves its process
        # unrecorded: any child that leads a session of its own and was not there before the
        # launch is the launcher's, and is stopped with its group too.
        for pid in _session_leading_children() - children_before - {p.pid for p in launched}:
            _kill_group(pid)
        if isinstance(e, Exception):
            raise _StartFailed(jvm_output.reason(e, ended=True)) from None
        raise
    finally:
        jvm_output.close_write_end()
    try:
        before_context(SparkConf(_jvm=gateway.jvm))
        SparkContext(conf=conf, gateway=gateway)
    except Exception as e:
        raise _StartFailed(jvm_output.reason(e)) from None
    except BaseException:
        # A signal while the SparkContext is made: the JVM would go once this process's end
        # closes its stdin, but a loaded machine takes its time; it is stopped now.
        for process in launched:
            _stop_process_group(process)
        raise
    return jvm_output


@contextlib.contextmanager
def _recording_processes(launched: list):
    """pyspark's launcher, its ``Popen`` recording each process it starts into ``launched``
    (it keeps the JVM's process to itself until the JVM has started)."""
    from pyspark import java_gateway

    def popen(*args, **kwargs):
        launched.append(subprocess.Popen(*args, **kwargs))
        return launched[-1]

    original = getattr(java_gateway, "Popen", None)
    if original is None:  # a pyspark that starts its JVM otherwise: nothing to record
        yield
        return
    java_gateway.Popen = popen
    try:
        yield
    finally:
        java_gateway.Popen = original


def _session_leading_children() -> set[int]:
    """This process's children that lead a session of their own (read from /proc; an empty
    set where there is none)."""
    me = os.getpid()
    found = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the command's ")": state, ppid, pgrp, session
        if int(fields[1]) == me and int(fields[3]) == int(entry):
            found.add(int(entry))
    return found


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _stop_process_group(process: "subprocess.Popen") -> None:
    """Kill a process started in a session of its own, and what it started (the group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


class _StartFailed(Exception):
    """The JVM or its SparkContext did not start: the message says why, in one line."""


class JvmOutput:
    """The output of the JVM a session starts (stdout and stderr: the JVM writes its own
    errors to stdout), read through a pipe by a thread of its own.

    While Spark starts it is held: its banner is noise, and when a JVM rejects its settings
    it prints a stack trace of dozens of lines, of which the error says one.  Once the
    session has started, what the JVM and its Python workers print is passed on to this
    process's stderr (task failures), unless a signal is stopping the command: the JVM's
    complaints about cancelled jobs are then dropped."""

    def __init__(self):
        self.read_fd, self.write_fd = os.pipe()
        self.held: list[str] = []
        self.passing = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, name="kraftcheck-jvm-stderr", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        with os.fdopen(self.read_fd, "rb") as pipe:
            for line in pipe:
                with self.lock:
                    if not self.passing:
                        self.held.append(line.decode("utf-8", "replace").rstrip())
                        continue
                if received() is None:
                    try:
                        os.write(sys.stderr.fileno(), line)
                    except (OSError, ValueError):
                        pass

    def close_write_end(self) -> None:
        """This process's copy of the pipe's write end, once the JVM holds its own: the
        thread sees the end of the output when the JVM exits."""
        if self.write_fd is not None:
            os.close(self.write_fd)
            self.write_fd = None

    def pass_on(self) -> None:
        """The session has started: drop what was held, pass on what comes."""
        with self.lock:
            self.held.clear()
            self.passing = True

    def reason(self, error: BaseException, ended: bool = False) -> str:
        """Why Spark did not start, in one line: the message of the Java exception named in
        ``error`` or in the JVM's output, else the JVM's last line, else ``error``'s first.
        ``ended``: the JVM has exited, so its whole output can be waited for."""
        self.thread.join(5.0 if ended else 0.5)
        with self.lock:
            lines = str(error).splitlines() + list(self.held)
            held = list(self.held)
        for line in lines:
            found = _JAVA_EXCEPTION.search(line)
            if found:
                return found.group("message").strip()[:300]
        printed = [line for line in held if line.strip() and not line[0].isspace() and not line.startswith("WARNING")]
        return printed[-1][:300] if printed else _first_line(error)


#: A Java exception and its message, as a stack trace or a py4j error starts.
_JAVA_EXCEPTION = re.compile(r"(?:^|: |\" )(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): (?P<message>.+)")


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:300]
