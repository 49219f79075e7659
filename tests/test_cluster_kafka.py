"""kraftcheck cluster against real Kafka clusters on 127.0.0.1: one KRaft controller and two
brokers with two log directories each, Kafka's server jars from Maven Central, a fresh cluster
per scenario.  Each shipped scenario gives a model verdict and a durability verdict, and
nothing is left running.  Findings 1 and 7 get the line spec/README.md gives them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def play(name: str, tmp_path: Path, *extra: str):
    """Plays a shipped scenario on a fresh cluster, once more if the first run was disturbed: a
    broker that no event stopped was fenced or left the ISR, as a loaded machine can make it (the
    run says so, and is no experiment the model can judge)."""
    for attempt in (1, 2):
        summary = tmp_path / f"summary{attempt}.json"
        done = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "cluster", name, "--workdir",
                               str(tmp_path / f"cluster{attempt}"), "--json", str(summary), *extra],
                              capture_output=True, text=True, cwd=REPO, timeout=900)
        assert done.stderr == "", done.stderr
        assert not processes_under(tmp_path), "a process of the cluster is still running"
        [entry] = json.loads(summary.read_text())["cluster"]
        if not entry["verdict"].startswith("disturbed"):
            break
    return done, entry


def processes_under(folder: Path) -> list[int]:
    """Processes whose command line names the folder: the cluster's JVMs, by their configs."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in cmdline and "kafka.Kafka" in cmdline:
            pids.append(int(pid))
    return pids


def lines(done) -> list[str]:
    return done.stdout.splitlines()


KEPT = "  durability: every acknowledged record read back"


@pytest.mark.parametrize("name, events", [
    ("dirfailure", ["fail_dir broker 0 dir 0"]),
    ("killrestart", ["kill broker 1", "start broker 1", "kill broker 0", "start broker 0"]),
    ("replaceddisk", ["fail_dir broker 1 dir 0", "kill broker 1", "replace_disk broker 1 dir 0", "start broker 1"]),
    ("movefail", ["wait 5 s", "move broker 1 dir 1", "fail_dir broker 1 dir 1"]),
])
def test_scenarios_the_model_reaches_and_nothing_acknowledged_is_lost(name, events, tmp_path):
    done, entry = play(name, tmp_path)
    assert done.returncode == 0, done.stdout
    assert entry["events"] == events
    assert entry["verdict"] == "conforms, kept"
    assert entry["model"]["conforms"] and all(step["matched"] > 0 for step in entry["model"]["steps"])
    assert any(line.startswith("  model: conforms: every settled state") for line in lines(done))
    assert any(line.startswith(KEPT) for line in lines(done))
    d = entry["durability"]
    assert d["acked"] > 0 and d["lost"] == [] and d["complete"]


def test_a_pause_past_the_session_timeout_is_a_live_broker_fenced_and_back(tmp_path):
    """The controller fences the leader while its process is stopped and still lives: the
    model's ControllerFencesSilentBroker, where the pause is.  Continued, the same incarnation
    is unfenced by its heartbeats and back in the ISR."""
    done, entry = play("pause", tmp_path)
    assert done.returncode == 0, done.stdout
    assert entry["verdict"] == "conforms, kept"
    assert "  model: conforms: every settled state (3) is a state the model reaches under these events" in lines(done)
    paused = entry["observations"][1]["view"]
    assert (paused["brokers"]["0"]["fenced"], paused["partition"]["leader"], paused["partition"]["isr"]) == (True, 1, [1])
    last = entry["observations"][-1]["view"]
    assert (last["brokers"]["0"]["fenced"], last["partition"]["isr"]) == (False, [0, 1])


def test_finding_7_on_a_real_cluster_the_empty_replica_is_not_elected(tmp_path):
    """Without ELR, broker 0 back with an empty disk is unfenced before its assignment reaches
    the controller, so no clean election makes it leader (finding 5's path): the partition
    stays leaderless, the ISR [0], and nothing can be read; nothing acknowledged is read back
    from an empty leader either."""
    done, entry = play("disklost", tmp_path)
    assert done.returncode == 0, done.stdout
    assert entry["verdict"] == "conforms, unread"
    last = entry["observations"][-1]["view"]
    assert (last["partition"]["leader"], last["partition"]["isr"], last["partition"]["elr"]) == (-1, [0], [])
    assert last["brokers"]["0"] == {"fenced": False, "onlineDirs": ["b0/dir0", "b0/dir1"]}
    assert entry["durability"]["error"] == "the partition has no leader"


def test_finding_7s_events_with_elr_on_kafka_4_0_0_kafka_19522_puts_the_empty_replica_back_in_the_isr(tmp_path):
    """With ELR, 4.0.0 elects broker 0, fenced, from the last known ELR (KAFKA-19522): when
    broker 1 is unfenced, or in the unclean-shutdown handling of broker 0's new registration,
    as the timing gives.  Broker 0's new incarnation, its disk empty, is then the ISR's only
    member, and the partition's leader while fenced.  What follows depends on which reaches
    the controller first, broker 0's assignment to its new disk or its unfencing, and the model
    reaches both:

    - unfenced first: the assignment that follows judges the leader on the directory the
      partition had, the replaced disk's, which is not online: the leadership goes, and nobody
      is elected: leaderless, nothing read;
    - assigned first: the assignment leaves the partition leaderless the same way, and the
      unfencing then elects broker 0, a clean election from the ISR [0], its disk empty: the
      records acknowledged before are lost, finding 7 on a real 4.0.0 cluster."""
    done, entry = play("disklostelr", tmp_path)
    views = [o["view"]["partition"] for o in entry["observations"]]
    assert [(v["leader"], v["isr"], v["elr"]) for v in views[:-1]] == [
        (0, [0, 1], []), (0, [0], []), (-1, [], [0]), (-1, [], [0]), (-1, [], [0])], done.stdout
    # records in the log's order: the controller's batches may hold the records of several
    # requests (its append linger), so the assignment and the unfencing can share one
    log = [r for batch in entry["played"]["metadataLog"] for r in batch["records"]]
    fenced = first(log, lambda r: r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "fenced=1," in r)
    elected = first(log, lambda r: r.startswith("PartitionChangeRecord(") and ", leader=0," in r
                    and "leaderRecoveryState=1," in r)
    unfenced = first(log, lambda r: r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "fenced=-1," in r,
                     after=fenced)
    assert fenced < elected < unfenced < len(log)
    registered = max(i for i, r in enumerate(log) if r.startswith("RegisterBrokerRecord(brokerId=0,"))
    assigned = first(log, lambda r: r.startswith("PartitionChangeRecord(") and "directories=[" in r, after=registered)
    if assigned < unfenced:
        reelected = first(log, lambda r: r.startswith("PartitionChangeRecord(") and ", leader=0," in r, after=elected)
        assert unfenced < reelected < len(log)
        assert (done.returncode, entry["verdict"]) == (15, "conforms, lost"), done.stdout
        assert (views[-1]["leader"], views[-1]["leaderEpoch"]) == (0, 4)  # elected (2), leaderless (3), elected (4)
        assert entry["durability"]["lost"] != []
    else:
        assert (done.returncode, entry["verdict"]) == (0, "conforms, unread"), done.stdout
        assert (views[-1]["leader"], views[-1]["isr"], views[-1]["elr"]) == (-1, [0], [])
        assert views[-1]["leaderEpoch"] == 3  # elected (2), then led by nobody again (3)


def first(log: list, wanted, after: int = -1) -> int:
    """The index of the first record (or batch) after ``after`` that ``wanted`` accepts (the
    log's length when there is none: later than any)."""
    return next((i for i, r in enumerate(log) if i > after and wanted(r)), len(log))


def test_finding_1s_order_on_a_real_cluster(tmp_path):
    """Paused until fenced, its directory failed while stopped, continued: the broker's first
    heartbeat unfences it (and elects it, on the failed directory) before it has noticed the
    failure, and a later one reports it.  No batch both unfences the broker and drops the
    directory, as finding 1's heartbeat does; the settled state has no leader on the failed
    directory.  The model reaches every settled state: the pause is a live broker fenced."""
    done, entry = play("heartbeatdir", tmp_path)
    assert (done.returncode, entry["verdict"]) == (0, "conforms, unread"), done.stdout
    last = entry["observations"][-1]["view"]
    assert (last["partition"]["leader"], last["partition"]["elr"]) == (-1, [0])
    assert last["brokers"]["0"] == {"fenced": False, "onlineDirs": ["b0/dir1"]}
    # by batch: one heartbeat's handling writes one batch
    log = [batch["records"] for batch in entry["played"]["metadataLog"]]
    unfences = lambda r: r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "fenced=-1," in r  # noqa: E731
    drops_dir = lambda r: r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "logDirs=[]" not in r  # noqa: E731
    fenced = first(log, lambda batch: any(r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "fenced=1," in r
                                          for r in batch))
    back = first(log, lambda batch: any(map(unfences, batch)), after=fenced)
    assert any(r.startswith("PartitionChangeRecord(") and ", leader=0," in r for r in log[back])
    dropped = first(log, lambda batch: any(map(drops_dir, batch)), after=fenced)
    assert back < dropped
    assert any(r.startswith("PartitionChangeRecord(") and ", leader=-1," in r for r in log[dropped])


def test_finding_7s_events_with_elr_on_kafka_4_4_0(tmp_path):
    """4.4.0 has KAFKA-19522's fix: nobody is elected while broker 0 is fenced, and its new
    incarnation's unclean shutdown takes it out of the ELR, leaving the partition with neither
    ISR nor ELR and broker 0 its last known leader.  What follows depends on which reaches the
    controller first, broker 0's assignment to its new disk or its unfencing, and the model
    reaches both:

    - unfenced first: its replica is still on the replaced disk's directory, which is not
      acceptable, and nobody is elected: leaderless, nothing read;
    - assigned first: its unfencing elects it as the last known leader (canElectLastKnownLeader,
      an unclean election with unclean elections off), its disk empty, and the records
      acknowledged before are lost: finding 7 on a real 4.4.0 cluster."""
    done, entry = play("disklostelr", tmp_path, "--kafka-version", "4.4.0")
    records = [r for batch in entry["played"]["metadataLog"] for r in batch["records"]]
    registered = max(i for i, r in enumerate(records) if r.startswith("RegisterBrokerRecord(brokerId=0,"))
    after = list(enumerate(records))[registered:]
    unfenced = first_index(after, lambda r: r.startswith("BrokerRegistrationChangeRecord(brokerId=0,") and "fenced=-1," in r)
    assigned = first_index(after, lambda r: r.startswith("PartitionChangeRecord(") and "directories=[" in r)
    elected = first_index(after, lambda r: r.startswith("PartitionChangeRecord(") and ", leader=0," in r)
    last = entry["observations"][-1]["view"]["partition"]
    assert entry["kafkaVersion"] == "4.4.0"
    # nobody is elected before the new incarnation registers: KAFKA-19522's fix
    assert not any("leaderRecoveryState=1," in r for r in records[:registered])
    if assigned < unfenced:
        assert elected is not None and elected > unfenced
        assert ", isr=[0], leader=0," in records[elected] and "leaderRecoveryState=1," in records[elected]
        assert (done.returncode, entry["verdict"]) == (15, "conforms, lost"), done.stdout
        assert (last["leader"], last["leaderEpoch"]) == (0, 2)
    else:
        assert elected is None
        assert (done.returncode, entry["verdict"]) == (0, "conforms, unread"), done.stdout
        assert (last["leader"], last["isr"], last["elr"], last["leaderEpoch"]) == (-1, [], [], 1)


def first_index(numbered, holds) -> int | None:
    return next((i for i, r in numbered if holds(r)), None)


def test_a_cluster_already_running_at_bootstrap(tmp_path):
    """--bootstrap plays a scenario that needs no process against a cluster someone else
    started on this machine (here, one this test starts): a move, held to the model."""
    from kraftcheck.cluster.nodes import ClusterSpec, LoopbackCluster

    scenario = tmp_path / "move.toml"
    scenario.write_text('# A move.\n[[events]]\ndo = "move"\nbroker = "follower"\ndir = "other"\n')
    for attempt in (1, 2):  # once more if a loaded machine disturbed the first run, as play() does
        with LoopbackCluster(tmp_path / f"theirs{attempt}", ClusterSpec()) as theirs:
            done = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "cluster", str(scenario),
                                   "--bootstrap", theirs.bootstrap, "--metadata-log", str(theirs.metadata_log_dir()),
                                   "--json", str(tmp_path / "summary.json")],
                                  capture_output=True, text=True, cwd=REPO, timeout=600)
            assert done.stderr == ""
            assert len(theirs.pids()) == 3  # their processes are left alone
        [entry] = json.loads((tmp_path / "summary.json").read_text())["cluster"]
        if not entry["verdict"].startswith("disturbed"):
            break
    assert done.returncode == 0, done.stdout
    assert (entry["events"], entry["verdict"]) == (["move broker 1 dir 1"], "conforms, kept")
    assert entry["observations"][-1]["view"]["partition"]["dirs"] == ["b0/dir0", "b1/dir1"]
