"""A scenario: a small TOML file naming a cluster and the external events played against it.

```toml
# Directory failure: the leader's directory that holds the partition fails.
[cluster]
brokers = 2               # broker ids 0 .. brokers-1
dirs_per_broker = 2
replication_factor = 2    # topic p0's replicas: brokers 0 .. replication_factor-1
min_insync_replicas = 1
elr = true                # eligible.leader.replicas.version 1 (false: 0)

[[events]]
do = "fail_dir"
broker = "leader"         # the partition's leader as the scenario starts; or "follower", or an id
dir = "replica"           # the slot holding the partition's replica then; "other"; "future"
                          # (a move's destination, while it runs); or a slot
```

The events (``do``): ``fail_dir`` (broker, dir), ``repair_dir`` and ``replace_disk`` (broker,
dir: the failed directory made a directory again, with its data or empty; the broker down),
``kill`` (SIGKILL), ``start``, ``pause`` (SIGSTOP), ``resume`` (SIGCONT), ``move`` (broker,
dir: alterReplicaLogDirs to that slot), ``elect_unclean`` (an operator's unclean election) and
``wait`` (seconds).  After each, the run waits for the cluster to settle and observes it,
unless the event says ``settle = false``.

A scenario file is data: it names events, never code to run.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .nodes import ClusterSpec

#: Each event, with the keys it takes besides ``do`` and ``settle``.
EVENTS = {
    "fail_dir": ("broker", "dir"),
    "repair_dir": ("broker",),
    "replace_disk": ("broker",),
    "kill": ("broker",),
    "start": ("broker",),
    "pause": ("broker",),
    "resume": ("broker",),
    "move": ("broker", "dir"),
    "elect_unclean": (),
    "wait": ("seconds",),
}
#: Keys an event may leave out: the failed directory to repair or replace, when it has one.
OPTIONAL = {"repair_dir": ("dir",), "replace_disk": ("dir",)}
ROLES = ("leader", "follower")
DIR_ROLES = ("replica", "other", "future")
CLUSTER_KEYS = {
    "brokers": int, "dirs_per_broker": int, "replication_factor": int, "min_insync_replicas": int, "elr": bool,
    "metadata_version": str, "session_timeout_ms": int, "replica_lag_ms": int, "dir_failure_timeout_ms": int,
    "move_throttle_bytes_per_s": int,
}
MAX_EVENTS = 50


class ScenarioError(Exception):
    """A scenario file that cannot be read or makes no sense: one line, exit 2."""


@dataclass(frozen=True)
class Event:
    do: str
    broker: int | str | None = None
    dir: int | str | None = None
    seconds: float = 0.0
    settle: bool = True

    @property
    def observed(self) -> bool:
        """Is the cluster observed after it?  Not after a repair or a replacement (files changed
        while the broker is down, which the model folds into the broker's next start), nor
        after a wait that does not settle."""
        if self.do in ("repair_dir", "replace_disk"):
            return False
        return self.settle or self.do != "wait"

    def describe(self) -> str:
        said = [self.do]
        if self.broker is not None:
            said.append(f"broker {self.broker}")
        if self.dir is not None:
            said.append(f"dir {self.dir}")
        if self.do == "wait":
            said.append(f"{self.seconds:g} s")
        return " ".join(said)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    spec: ClusterSpec
    replication_factor: int
    min_insync_replicas: int
    events: tuple[Event, ...] = field(default_factory=tuple)
    #: the scenario file's text, kept with what is played from it
    text: str = ""

    @property
    def replicas(self) -> list[int]:
        return list(range(self.replication_factor))

    @property
    def unclean(self) -> bool:
        """An unclean election gives up acknowledged records by design."""
        return any(e.do == "elect_unclean" for e in self.events)


def _check_type(where: str, key: str, value, kind) -> None:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ScenarioError(f"{where}: {key} must be an integer, not {value!r}")
    if kind is not int and not isinstance(value, kind):
        raise ScenarioError(f"{where}: {key} must be {'true or false' if kind is bool else 'a string'}, not {value!r}")


def parse(text: str, name: str) -> Scenario:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{name}: not valid TOML: {e}") from None
    unknown = set(data) - {"cluster", "events"}
    if unknown:
        raise ScenarioError(f"{name}: unknown table {sorted(unknown)[0]!r} (a scenario has [cluster] and [[events]])")
    cluster = data.get("cluster", {})
    if not isinstance(cluster, dict):
        raise ScenarioError(f"{name}: [cluster] must be a table")
    for key, value in cluster.items():
        if key not in CLUSTER_KEYS:
            raise ScenarioError(f"{name}: [cluster] has no setting {key!r} (known: {', '.join(CLUSTER_KEYS)})")
        _check_type(f"{name}: [cluster]", key, value, CLUSTER_KEYS[key])
    brokers = cluster.get("brokers", 2)
    dirs = cluster.get("dirs_per_broker", 2)
    rf = cluster.get("replication_factor", min(brokers, 2))
    min_isr = cluster.get("min_insync_replicas", 1)
    if not 1 <= brokers <= 5:
        raise ScenarioError(f"{name}: brokers must be 1 to 5, not {brokers}")
    if not 1 <= dirs <= 4:
        raise ScenarioError(f"{name}: dirs_per_broker must be 1 to 4, not {dirs}")
    if not 1 <= rf <= brokers:
        raise ScenarioError(f"{name}: replication_factor must be 1 to brokers ({brokers}), not {rf}")
    if not 1 <= min_isr <= rf:
        raise ScenarioError(f"{name}: min_insync_replicas must be 1 to replication_factor ({rf}), not {min_isr}")
    spec_fields = {k: v for k, v in cluster.items() if k in ClusterSpec.__dataclass_fields__}
    for key in ("session_timeout_ms", "replica_lag_ms", "dir_failure_timeout_ms"):
        if key in spec_fields and not 100 <= spec_fields[key] <= 600_000:
            raise ScenarioError(f"{name}: {key} must be 100 to 600000, not {spec_fields[key]}")
    spec = ClusterSpec(**spec_fields)
    raw_events = data.get("events", [])
    if not isinstance(raw_events, list) or not all(isinstance(e, dict) for e in raw_events):
        raise ScenarioError(f"{name}: events must be an array of tables ([[events]])")
    if len(raw_events) > MAX_EVENTS:
        raise ScenarioError(f"{name}: {len(raw_events)} events; at most {MAX_EVENTS}")
    events = tuple(_event(name, i + 1, raw, brokers, dirs) for i, raw in enumerate(raw_events))
    summary = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), "")
    return Scenario(name, summary, spec, rf, min_isr, events, text)


def _event(name: str, index: int, raw: dict, brokers: int, dirs: int) -> Event:
    where = f"{name}: event {index}"
    do = raw.get("do")
    if do not in EVENTS:
        raise ScenarioError(f"{where}: do must be one of {', '.join(EVENTS)}, not {do!r}")
    allowed = set(EVENTS[do]) | set(OPTIONAL.get(do, ())) | {"do", "settle"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise ScenarioError(f"{where}: {do} takes no {extra[0]!r}")
    missing = [k for k in EVENTS[do] if k not in raw]
    if missing:
        raise ScenarioError(f"{where}: {do} needs {missing[0]!r}")
    settle = raw.get("settle", True)
    _check_type(where, "settle", settle, bool)
    broker = raw.get("broker")
    if broker is not None:
        if isinstance(broker, str):
            if broker not in ROLES:
                raise ScenarioError(f"{where}: broker must be an id or one of {', '.join(ROLES)}, not {broker!r}")
        else:
            _check_type(where, "broker", broker, int)
            if not 0 <= broker < brokers:
                raise ScenarioError(f"{where}: no broker {broker} (brokers are 0 to {brokers - 1})")
    slot = raw.get("dir")
    if slot is not None:
        if isinstance(slot, str):
            if slot not in DIR_ROLES:
                raise ScenarioError(f"{where}: dir must be a slot or one of {', '.join(DIR_ROLES)}, not {slot!r}")
        else:
            _check_type(where, "dir", slot, int)
            if not 0 <= slot < dirs:
                raise ScenarioError(f"{where}: no dir {slot} (slots are 0 to {dirs - 1})")
    seconds = raw.get("seconds", 0)
    if do == "wait" and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 600):
        raise ScenarioError(f"{where}: seconds must be a number from 0 to 600, not {seconds!r}")
    return Event(do, broker, slot, float(seconds), settle)


def load(path: str) -> Scenario:
    p = Path(path)
    if not p.is_file():
        shipped = shipped_scenarios().get(path) or shipped_scenarios().get(Path(path).stem)
        if shipped is None:
            raise ScenarioError(f"no such scenario: {path} (shipped: {', '.join(sorted(shipped_scenarios()))})")
        p = shipped
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"cannot read {path}: {e.__class__.__name__}: {e}") from None
    return parse(text, p.stem)


def shipped_scenarios() -> dict[str, Path]:
    from importlib import resources

    folder = resources.files("kraftcheck.spec.scenarios")
    return {Path(str(entry)).stem: Path(str(entry)) for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".toml")}
