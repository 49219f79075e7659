"""``kraftcheck cluster``: scenarios played against a real Kafka cluster on loopback, each settled
state held to the model and every acknowledged record read back.

Exit codes: 0 every scenario's states are the model's and every acknowledged record was read
back (or the scenario chose an unclean election, which gives records up by design); 14 a
settled state the model cannot reach under the scenario's events; 15 acknowledged records
lost; 2 bad usage or bad input (a scenario file, an address), or java or Maven missing; 1 the
cluster failed (a process that would not start, a client that would not answer).  With several
problems, the highest code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from kraftcheck.checker.outputs import refuse_replacing

EXIT_OK, EXIT_CLUSTER_FAILED, EXIT_BAD_INPUT, EXIT_DIVERGES, EXIT_LOST = 0, 1, 2, 14, 15


def register(commands) -> None:
    from kraftcheck.conform.harness import DEFAULT_KAFKA_VERSION

    cluster = commands.add_parser(
        "cluster", help="play scenarios against a real Kafka cluster on loopback, held to the model",
        description="Start a Kafka cluster (one KRaft controller, brokers with several log directories, Kafka's "
                    "server jars from Maven Central) on 127.0.0.1, play each SCENARIO's events against it "
                    "(directory failures, SIGKILL, SIGSTOP, moves, replaced disks) while a producer (acks=all) "
                    "writes numbered records, hold every settled state to the model under the same events, "
                    "and read every acknowledged record back. SCENARIO: a file, or a shipped scenario's name "
                    f"(spec/scenarios/). Exit 0: all hold; {EXIT_DIVERGES}: a state the model cannot reach; "
                    f"{EXIT_LOST}: acknowledged records lost; 2: bad input; 1: the cluster failed, or was disturbed.")
    cluster.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenario files or shipped names")
    cluster.add_argument("--list", action="store_true", help="list the shipped scenarios and exit")
    cluster.add_argument("--kafka-version", default=DEFAULT_KAFKA_VERSION, metavar="X.Y.Z",
                         help=f"the Kafka release to run, from Maven Central (default {DEFAULT_KAFKA_VERSION})")
    cluster.add_argument("--bootstrap", metavar="HOST:PORT",
                         help="play against a running cluster instead (only scenarios whose events need no "
                              "process: moves, unclean elections, waits); needs --metadata-log")
    cluster.add_argument("--metadata-log", metavar="DIR",
                         help="with --bootstrap: the controller's __cluster_metadata-0 directory, read for its state")
    cluster.add_argument("--workdir", metavar="DIR",
                         help="where the cluster's directories and logs go (default: a temporary directory, "
                              "removed afterwards unless --keep)")
    cluster.add_argument("--keep", action="store_true", help="keep the cluster's directories and logs")
    cluster.add_argument("--no-model", action="store_true", help="do not hold the states to the model")
    cluster.add_argument("--recorded", metavar="PATH",
                         help="start no cluster: hold the runs a --json summary recorded to the model again")
    cluster.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    cluster.set_defaults(run=run_cluster)


ADDRESS = re.compile(r"^(?P<host>[A-Za-z0-9.\-]{1,253}|\[[0-9a-fA-F:]+\]):(?P<port>[0-9]{1,5})$")


def check_bootstrap(value: str) -> str:
    """HOST:PORT[,HOST:PORT...], each port 1 to 65535; else ValueError (one line)."""
    for part in value.split(","):
        m = ADDRESS.match(part.strip())
        if not m or not 1 <= int(m.group("port")) <= 65535:
            raise ValueError(f"--bootstrap: not HOST:PORT: {part.strip()!r}")
    return value


#: Events that need the cluster's processes or disks, which --bootstrap does not give.
NEEDS_PROCESSES = {"fail_dir", "repair_dir", "replace_disk", "kill", "start", "pause", "resume"}


def run_cluster(args) -> int:
    from kraftcheck.conform.harness import HarnessFailed, HarnessUnavailable

    from .nodes import ClusterFailed
    from .scenario import ScenarioError, load, shipped_scenarios

    if args.list:
        for name, path in shipped_scenarios().items():
            first = next((line.lstrip("# ").strip() for line in path.read_text().splitlines() if line.startswith("#")), "")
            print(f"{name:<14} {first}")
        return EXIT_OK
    if args.recorded:
        if args.scenarios or args.bootstrap:
            return _bad("--recorded holds recorded runs again: it takes no SCENARIO and no --bootstrap")
        return hold_recorded(args)
    if not args.scenarios:
        return _bad("cluster needs SCENARIO files or names (see 'kraftcheck cluster --list')")
    try:
        refuse_replacing([s for s in args.scenarios if os.path.exists(s)], [("--json", args.json)])
        scenarios = [load(s) for s in args.scenarios]
        if args.bootstrap:
            check_bootstrap(args.bootstrap)
            if not args.metadata_log or not Path(args.metadata_log).is_dir():
                raise ValueError("--bootstrap needs --metadata-log DIR: the controller's __cluster_metadata-0 directory")
            for sc in scenarios:
                needs = next((e for e in sc.events if e.do in NEEDS_PROCESSES), None)
                if needs is not None:
                    raise ValueError(f"{sc.name}: {needs.do} needs the cluster's processes; run it without --bootstrap")
        elif args.metadata_log:
            raise ValueError("--metadata-log goes with --bootstrap")
    except (ScenarioError, ValueError) as e:
        return _bad(str(e))
    code = EXIT_OK
    summaries = []
    for sc in scenarios:
        try:
            played, held = play_one(sc, args)
        except HarnessUnavailable as e:
            _write_summary(args, summaries)
            return _bad(str(e))
        except (ClusterFailed, HarnessFailed) as e:
            print(f"error: {sc.name}: {e}", file=sys.stderr)
            code = max(code, EXIT_CLUSTER_FAILED)
            summaries.append({"scenario": sc.name, "verdict": "cluster failed", "error": str(e)})
            continue
        verdict, scenario_code = report(played, held)
        code = max(code, scenario_code)
        summaries.append(summary(played, held, verdict))
    _write_summary(args, summaries)
    return code


def _write_summary(args, summaries: list[dict]) -> None:
    if args.json:
        from kraftcheck.traces.itf import write_json_atomically

        write_json_atomically(args.json, {"cluster": summaries})


def held_to_model(played):
    """The model's verdict on a played scenario (a Held that says why, when it cannot be held)."""
    from .held import Held, NotModeled, hold
    from .play import disturbances

    disturbed = disturbances(played)
    if disturbed:
        return Held({}, disturbed="; ".join(disturbed) + ": as a loaded machine can, where no event asked for it")
    try:
        return hold(played)
    except NotModeled as e:
        return Held({}, not_modeled=str(e))


def hold_recorded(args) -> int:
    """The runs of a --json summary, held to the model again (no cluster started)."""
    from .play import played_from_json
    from .scenario import ScenarioError

    try:
        with open(args.recorded, encoding="utf-8") as f:
            data = json.load(f)
        runs = [entry["played"] for entry in data["cluster"] if "played" in entry]
        played_runs = [played_from_json(run) for run in runs]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return _bad(f"cannot read {args.recorded}: {e.__class__.__name__}: {e}")
    except ScenarioError as e:
        return _bad(f"{args.recorded}: {e}")
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return _bad(f"{args.recorded}: not a summary written by 'kraftcheck cluster --json' ({e.__class__.__name__}: {e})")
    if not played_runs:
        return _bad(f"{args.recorded}: no recorded run in it")
    code = EXIT_OK
    summaries = []
    for played in played_runs:
        print(f"{played.scenario.name}: {played.scenario.summary} (recorded against Kafka {played.kafka_version})")
        try:
            held = held_to_model(played)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            _write_summary(args, summaries)
            return _bad(f"{args.recorded}: a recorded observation is not one 'kraftcheck cluster --json' writes "
                        f"({e.__class__.__name__}: {e})")
        verdict, scenario_code = report(played, held)
        code = max(code, scenario_code)
        summaries.append(summary(played, held, verdict))
    _write_summary(args, summaries)
    return code


def play_one(scenario, args):
    from .client import ClusterClient
    from .nodes import LoopbackCluster
    from .play import ScenarioRunner

    print(f"{scenario.name}: {scenario.summary}")
    if args.bootstrap:
        from .remote import RemoteCluster

        with ClusterClient(args.bootstrap, args.kafka_version) as client:
            cluster = RemoteCluster(client, Path(args.metadata_log), scenario.spec, args.kafka_version)
            played = ScenarioRunner(scenario, cluster, client, say=print).run()
    else:
        workdir = Path(args.workdir) / scenario.name if args.workdir else Path(tempfile.mkdtemp(prefix=f"kraftcheck-{scenario.name}-"))
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            with LoopbackCluster(workdir, scenario.spec, args.kafka_version) as cluster, \
                    ClusterClient(cluster.bootstrap, args.kafka_version) as client:
                played = ScenarioRunner(scenario, cluster, client, say=print).run()
        finally:
            if not args.keep and not args.workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    return played, (None if args.no_model else held_to_model(played))


def report(played, held) -> tuple[str, int]:
    """Prints the observed states, the model's verdict and the durability verdict; returns the
    scenario's verdict and exit code."""
    from .observe import cluster_view, describe

    code = EXIT_OK
    for i, obs in enumerate(played.observations):
        line = f"    after {obs.after}: {describe(cluster_view(obs))}"
        if held is not None and i < len(held.steps):
            step = held.steps[i]
            line += f"  [model: {step.matched:,} of {step.reached:,} states]"
        print(line)
    verdicts = []
    if held is None:
        print("  model: not consulted (--no-model)")
    elif held.disturbed:
        print(f"  model: not held, the run was disturbed: {held.disturbed}")
        verdicts.append("disturbed")
        code = EXIT_CLUSTER_FAILED
    elif held.not_modeled:
        print(f"  model: not held: {held.not_modeled}")
        verdicts.append("not modeled")
    elif held.conforms:
        print(f"  model: conforms: every settled state ({len(held.steps)}) is a state the model reaches under these events")
        verdicts.append("conforms")
    else:
        step = held.steps[held.diverged_at]
        print(f"  model: DIVERGES after {step.after}: the model reaches {step.reached:,} states there and none looks "
              "like the cluster; its nearest state differs in")
        for field, model_value, cluster_value in step.nearest:
            print(f"      {field}: model {model_value!r}, cluster {cluster_value!r}")
        verdicts.append("diverges")
        code = EXIT_DIVERGES
    d = played.durability
    lost = d.lost
    if d.read_error or not d.complete:
        said = d.read_error or "the read did not reach the end offset"
        print(f"  durability: could not read the partition back ({said}); {len(d.acked):,} records acknowledged")
        verdicts.append("unread")
    elif lost:
        shown = ", ".join(map(str, lost[:10])) + (", ..." if len(lost) > 10 else "")
        why = " (the scenario chose an unclean election, which gives records up)" if played.scenario.unclean else ""
        print(f"  durability: LOST {len(lost):,} of {len(d.acked):,} acknowledged records: {shown}{why}")
        verdicts.append("lost")
        if not played.scenario.unclean:
            code = max(code, EXIT_LOST)
    else:
        print(f"  durability: every acknowledged record read back ({len(d.acked):,} of {d.sent:,} sent)")
        verdicts.append("kept")
    if d.unexpected:
        print(f"  durability: {len(d.unexpected)} records read that were never sent")
    searched = (f"; the model's search {held.seconds:.1f} s"
                if held is not None and not held.not_modeled and not held.disturbed else "")
    print(f"  ({played.seconds:.0f} s against Kafka {played.kafka_version}{searched})")
    return ", ".join(verdicts), code


def summary(played, held, verdict: str) -> dict:
    from .observe import cluster_view

    from .play import played_to_json, ranges

    d = played.durability
    out = {
        "scenario": played.scenario.name, "kafkaVersion": played.kafka_version, "verdict": verdict,
        "events": [e.describe() for e in played.events],
        "observations": [{"after": o.after, "settled": o.settled, "view": json.loads(json.dumps(cluster_view(o), default=str))}
                         for o in played.observations],
        "durability": {"sent": d.sent, "acked": len(d.acked), "read": len(d.read), "lost": ranges(d.lost),
                       "failures": d.failures, "complete": d.complete, "error": d.read_error},
        "seconds": round(played.seconds, 1),
        # everything observed, for 'kraftcheck cluster --recorded'
        "played": played_to_json(played),
    }
    if held is not None:
        out["model"] = {"settings": held.settings, "conforms": held.conforms, "notModeled": held.not_modeled,
                        "disturbed": held.disturbed,
                        "seconds": round(held.seconds, 2),
                        "steps": [{"after": s.after, "reached": s.reached, "matched": s.matched,
                                   "nearest": [{"field": f, "model": m, "cluster": c} for f, m, c in s.nearest]}
                                  for s in held.steps]}
    return out


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
