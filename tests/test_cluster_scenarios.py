"""kraftcheck cluster without a cluster: scenario files, the command line, the views, and the
model's verdict on runs recorded from real Kafka 4.0.0 clusters (tests/data/cluster/*.json,
written by ``kraftcheck cluster NAME --json``).  The clusters themselves run in
tests/test_cluster_kafka.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kraftcheck.cluster.held import hold, model_settings, observed_groups
from kraftcheck.cluster.observe import cluster_view, uuid_from_base64
from kraftcheck.cluster.play import disturbances, played_from_json, played_to_json
from kraftcheck.cluster.run import check_bootstrap
from kraftcheck.cluster.scenario import Event, ScenarioError, parse, shipped_scenarios

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "cluster"


def kraftcheck(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def recorded(name: str):
    data = json.loads((RECORDED / f"{name}.json").read_text())
    return played_from_json(data["cluster"][0]["played"])


# ---------------------------------------------------------------------------------------------
# Scenario files
# ---------------------------------------------------------------------------------------------

def test_the_shipped_scenarios():
    assert sorted(shipped_scenarios()) == ["dirfailure", "disklost", "disklostelr", "heartbeatdir", "killrestart",
                                           "movefail", "pause", "replaceddisk"]


def test_a_scenario_reads_as_written():
    s = parse('# A line.\n[cluster]\nbrokers = 3\nreplication_factor = 3\nmin_insync_replicas = 2\nelr = false\n'
              '[[events]]\ndo = "kill"\nbroker = "leader"\nsettle = false\n'
              '[[events]]\ndo = "fail_dir"\nbroker = 2\ndir = "other"\n', "x")
    assert (s.summary, s.spec.brokers, s.replicas, s.min_insync_replicas, s.spec.elr) == ("A line.", 3, [0, 1, 2], 2, False)
    assert s.events == (Event("kill", "leader", None, 0.0, False), Event("fail_dir", 2, "other", 0.0, True))


@pytest.mark.parametrize("text, message", [
    ("[cluster\n", "x: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 9)"),
    ("[nodes]\n", "x: unknown table 'nodes' (a scenario has [cluster] and [[events]])"),
    ("[cluster]\nbrokerz = 2\n", "x: [cluster] has no setting 'brokerz' (known: brokers, dirs_per_broker, "
     "replication_factor, min_insync_replicas, elr, metadata_version, session_timeout_ms, replica_lag_ms, "
     "dir_failure_timeout_ms, move_throttle_bytes_per_s)"),
    ("[cluster]\nbrokers = true\n", "x: [cluster]: brokers must be an integer, not True"),
    ("[cluster]\nelr = 1\n", "x: [cluster]: elr must be true or false, not 1"),
    ("[cluster]\nbrokers = 9\n", "x: brokers must be 1 to 5, not 9"),
    ("[cluster]\nreplication_factor = 3\n", "x: replication_factor must be 1 to brokers (2), not 3"),
    ("[cluster]\nmin_insync_replicas = 3\n", "x: min_insync_replicas must be 1 to replication_factor (2), not 3"),
    ("[cluster]\nsession_timeout_ms = 5\n", "x: session_timeout_ms must be 100 to 600000, not 5"),
    ("events = 3\n", "x: events must be an array of tables ([[events]])"),
    ('[[events]]\ndo = "explode"\n', "x: event 1: do must be one of fail_dir, repair_dir, replace_disk, kill, start, "
     "pause, resume, move, elect_unclean, wait, not 'explode'"),
    ('[[events]]\ndo = "kill"\n', "x: event 1: kill needs 'broker'"),
    ('[[events]]\ndo = "kill"\nbroker = 7\n', "x: event 1: no broker 7 (brokers are 0 to 1)"),
    ('[[events]]\ndo = "kill"\nbroker = "boss"\n', "x: event 1: broker must be an id or one of leader, follower, not 'boss'"),
    ('[[events]]\ndo = "kill"\nbroker = 0\ndir = 1\n', "x: event 1: kill takes no 'dir'"),
    ('[[events]]\ndo = "fail_dir"\nbroker = 0\ndir = 5\n', "x: event 1: no dir 5 (slots are 0 to 1)"),
    ('[[events]]\ndo = "fail_dir"\nbroker = 0\ndir = "best"\n',
     "x: event 1: dir must be a slot or one of replica, other, future, not 'best'"),
    ('[[events]]\ndo = "wait"\nseconds = 0\n', "x: event 1: seconds must be a number from 0 to 600, not 0"),
    ('[[events]]\ndo = "kill"\nbroker = 0\nsettle = "no"\n', "x: event 1: settle must be true or false, not 'no'"),
])
def test_a_bad_scenario_is_one_line(text, message):
    with pytest.raises(ScenarioError) as e:
        parse(text, "x")
    assert str(e.value) == message


def test_observations_follow_the_observed_events():
    events = [Event("fail_dir", 0, 0), Event("kill", 0, settle=False), Event("replace_disk", 0, 0, settle=False),
              Event("start", 0), Event("wait", seconds=1, settle=False)]
    assert observed_groups(events) == [[], [events[0]], [events[1]], [events[2], events[3]]]


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    ((), "error: cluster needs SCENARIO files or names (see 'kraftcheck cluster --list')"),
    (("nosuch",), "error: no such scenario: nosuch (shipped: dirfailure, disklost, disklostelr, heartbeatdir, "
                  "killrestart, movefail, pause, replaceddisk)"),
    (("movefail", "--bootstrap", "localhost"), "error: --bootstrap: not HOST:PORT: 'localhost'"),
    (("movefail", "--bootstrap", "127.0.0.1:9092"),
     "error: --bootstrap needs --metadata-log DIR: the controller's __cluster_metadata-0 directory"),
    (("movefail", "--metadata-log", "."), "error: --metadata-log goes with --bootstrap"),
    (("--recorded", "x.json", "pause"), "error: --recorded holds recorded runs again: it takes no SCENARIO and no --bootstrap"),
    (("--recorded", "no/such.json"), "error: cannot read no/such.json: FileNotFoundError: [Errno 2] No such file or "
                                     "directory: 'no/such.json'"),
])
def test_bad_usage_is_one_line_and_exit_2(args, message):
    done = kraftcheck("cluster", *args)
    assert (done.returncode, done.stderr.strip(), done.stdout) == (2, message, "")


def test_bootstrap_refuses_events_that_need_the_processes(tmp_path):
    done = kraftcheck("cluster", "killrestart", "--bootstrap", "127.0.0.1:9092", "--metadata-log", str(tmp_path))
    assert (done.returncode, done.stderr.strip()) == (2, "error: killrestart: kill needs the cluster's processes; "
                                                         "run it without --bootstrap")


def test_a_recording_that_is_not_one(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"cluster": [{"played": {"scenario": {"name": "x", "text": "[[events]]\\ndo = \\"fly\\"\\n"}}}]}')
    done = kraftcheck("cluster", "--recorded", str(bad))
    assert (done.returncode, done.stderr.strip()) == (
        2, f"error: {bad}: x: event 1: do must be one of fail_dir, repair_dir, replace_disk, kill, start, pause, "
           "resume, move, elect_unclean, wait, not 'fly'")
    bad.write_text('{"cluster": [{"played": {}}]}')
    done = kraftcheck("cluster", "--recorded", str(bad))
    assert (done.returncode, done.stderr.strip()) == (
        2, f"error: {bad}: not a summary written by 'kraftcheck cluster --json' (KeyError: 'scenario')")


def test_list_names_every_shipped_scenario():
    done = kraftcheck("cluster", "--list")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == sorted(shipped_scenarios())


@pytest.mark.parametrize("value", ["127.0.0.1:9092", "localhost:1,127.0.0.1:65535", "[::1]:9092"])
def test_bootstrap_addresses(value):
    assert check_bootstrap(value) == value


@pytest.mark.parametrize("value", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "a b:1", ":9092"])
def test_bad_bootstrap_addresses(value):
    with pytest.raises(ValueError) as e:
        check_bootstrap(value)
    assert str(e.value) == f"--bootstrap: not HOST:PORT: {value!r}"


# ---------------------------------------------------------------------------------------------
# Views: the cluster's and the model's in the same terms
# ---------------------------------------------------------------------------------------------

def test_kafka_uuids_from_their_base64_form():
    # Uuid(1, 2).toString() and Uuid(-1, 0x7fff).toString() in Kafka
    assert uuid_from_base64("AAAAAAAAAAEAAAAAAAAAAg") == (1, 2)
    assert uuid_from_base64("__________8AAAAAAAB__w") == (-1, 0x7FFF)


def test_a_recorded_run_round_trips_through_json():
    played = recorded("replaceddisk")
    assert played_to_json(played_from_json(played_to_json(played))) == played_to_json(played)


def test_directories_are_named_by_slot_and_a_replaced_disk_by_what_it_was():
    played = recorded("replaceddisk")
    views = [cluster_view(o) for o in played.observations]
    assert [v["partition"]["dirs"] for v in views] == [["b0/dir0", "b1/dir0"]] * 4
    assert [v["brokers"][1] and v["brokers"][1]["onlineDirs"] for v in views] == [
        ["b1/dir0", "b1/dir1"], ["b1/dir1"], ["b1/dir1"], ["b1/dir0", "b1/dir1"]]
    # the disk in slot 0 after the restart is a new one: its ID is not the one the run began with
    assert played.observations[0].dir_ids[1][0] != played.observations[3].dir_ids[1][0]


# ---------------------------------------------------------------------------------------------
# The model's verdict on recorded runs (exact counts: the model's search is deterministic)
# ---------------------------------------------------------------------------------------------

def test_the_model_settings_count_the_events():
    assert model_settings(recorded("replaceddisk")) == {
        "brokers": 2, "dirs_per_broker": 2, "partitions": 1, "replication_factor": 2, "min_isr": 1, "elr": True,
        "restarts": 1, "dir_failures": 1, "moves": 0, "session_expiries": 0, "unclean_election": "off", "records": 2,
        "semantics": "code", "kafka_version": "4.0.0"}
    assert model_settings(recorded("pause"))["session_expiries"] == 1


@pytest.mark.parametrize("name, steps", [
    ("dirfailure", [("the topic's creation", 6746, 244), ("fail_dir broker 0 dir 0", 2312, 707)]),
    ("replaceddisk", [("the topic's creation", 6746, 244), ("fail_dir broker 1 dir 0", 3326, 610),
                      ("kill broker 1", 1898, 1062), ("start broker 1", 9617, 186)]),
])
def test_recorded_runs_that_conform(name, steps):
    held = hold(recorded(name))
    assert held.conforms
    assert [(s.after, s.reached, s.matched) for s in held.steps] == steps


def test_a_recorded_pause_conforms_the_session_expiring_while_the_process_lives():
    """The leader paused until fenced: ControllerFencesSilentBroker where the pause is; continued,
    the same incarnation's heartbeats unfence it and it rejoins the ISR."""
    held = hold(recorded("pause"))
    assert held.conforms
    assert [(s.after, s.reached, s.matched) for s in held.steps] == [
        ("the topic's creation", 6746, 244), ("pause broker 0", 4793, 2510), ("resume broker 0", 4793, 937)]


def test_a_tampered_observation_diverges_with_the_field_named():
    played = recorded("dirfailure")
    played.observations[1].controller["partitions"]["0"]["leaderEpoch"] = 7
    held = hold(played)
    assert (held.diverged_at, held.steps[1].nearest) == (1, [("partition.leaderEpoch", 1, 7)])


def test_the_recorded_command_gives_the_same_verdict():
    done = kraftcheck("cluster", "--recorded", str(RECORDED / "pause.json"))
    assert done.returncode == 0
    assert "  model: conforms: every settled state (3) is a state the model reaches under these events" in \
        done.stdout.splitlines()
    assert ("    after pause broker 0: p0: leader 1, ISR [1], epochs 1/3, dirs ['b0/dir0', 'b1/dir0']; broker 0: up, "
            "fenced, online ['b0/dir0', 'b0/dir1']; broker 1: up, unfenced, online ['b1/dir0', 'b1/dir1']  "
            "[model: 2,510 of 4,793 states]") in done.stdout.splitlines()


def with_records(name: str, *records: str) -> dict:
    """A recorded run with ``records`` appended to its metadata log, after the topic's creation."""
    data = json.loads((RECORDED / f"{name}.json").read_text())
    data["cluster"][0]["played"]["metadataLog"].append({"baseOffset": 10_000, "records": list(records)})
    return data


FENCES_1 = "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=21, fenced=1, inControlledShutdown=0, logDirs=[])"
SHRINKS_TO_0 = ("PartitionChangeRecord(partitionId=0, topicId=6F4IR8W4T6ClwQv8hKcMpQ, isr=[0], leader=-2, replicas=null, "
                "removingReplicas=null, addingReplicas=null, leaderRecoveryState=-1, directories=null, "
                "eligibleLeaderReplicas=null, lastKnownElr=null)")
EXPANDS_TO_0_1 = SHRINKS_TO_0.replace("isr=[0]", "isr=[0, 1]")


def test_a_move_recorded_at_bootstrap_conforms_and_was_not_disturbed():
    played = recorded("move")
    assert [e.describe() for e in played.events] == ["move broker 1 dir 1"]
    assert disturbances(played) == []
    held = hold(played)
    assert held.conforms
    assert [(s.after, s.reached, s.matched) for s in held.steps] == [
        ("the topic's creation", 6746, 244), ("move broker 1 dir 1", 645, 226)]


def test_a_broker_fenced_that_no_event_stopped_disturbs_the_run(tmp_path):
    """A running broker whose heartbeats came late (a loaded machine) is fenced where no event
    asked for it: the run is held to nothing, and says why (exit 1, not a divergence)."""
    disturbed = tmp_path / "disturbed.json"
    disturbed.write_text(json.dumps(with_records("move", FENCES_1, SHRINKS_TO_0, EXPANDS_TO_0_1)))
    done = kraftcheck("cluster", "--recorded", str(disturbed), "--json", str(tmp_path / "again.json"))
    assert (done.returncode, done.stderr) == (1, "")
    assert ("  model: not held, the run was disturbed: the controller fenced broker 1, which no event stopped "
            "(heartbeats later than broker.session.timeout.ms): as a loaded machine can, where no event asked "
            "for it") in done.stdout.splitlines()
    [entry] = json.loads((tmp_path / "again.json").read_text())["cluster"]
    assert (entry["verdict"], entry["model"]["conforms"], entry["model"]["steps"]) == ("disturbed, kept", False, [])


def test_a_follower_that_left_the_isr_unbidden_disturbs_the_run():
    played = played_from_json(with_records("move", SHRINKS_TO_0, EXPANDS_TO_0_1)["cluster"][0]["played"])
    assert disturbances(played) == [
        "broker 1 left the ISR, which no event stopped (behind for replica.lag.time.max.ms)"]
    # another topic's partition leaving its ISR is none of the run's business
    other = played_from_json(with_records("move", SHRINKS_TO_0.replace("6F4IR8W4T6ClwQv8hKcMpQ", "AAAAAAAAAAAAAAAAAAAAAQ"))
                             ["cluster"][0]["played"])
    assert disturbances(other) == []


def test_what_the_scenario_caused_is_no_disturbance():
    data = with_records("move", FENCES_1, SHRINKS_TO_0)
    played = played_from_json(data["cluster"][0]["played"])
    assert len(disturbances(played)) == 1
    played.events.append(Event("kill", 1))
    assert disturbances(played) == []
    # what came before the topic's creation is the cluster's history, not the run's
    data["cluster"][0]["played"]["metadataLog"].append(
        {"baseOffset": 10_001, "records": ["TopicRecord(name='p0', topicId=AAAAAAAAAAAAAAAAAAAAAQ)"]})
    assert disturbances(played_from_json(data["cluster"][0]["played"])) == []


def test_a_recorded_observation_that_is_not_one(tmp_path):
    data = json.loads((RECORDED / "dirfailure.json").read_text())
    del data["cluster"][0]["played"]["observations"][1]["controller"]["brokers"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    done = kraftcheck("cluster", "--recorded", str(bad))
    assert (done.returncode, done.stderr.strip()) == (
        2, f"error: {bad}: a recorded observation is not one 'kraftcheck cluster --json' writes (KeyError: 'brokers')")
