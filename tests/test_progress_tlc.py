"""Real TLC agrees with kraftcheck on the progress properties, property by property.

TLC 2.15 checks ``FairSpec`` (``Spec /\\ ProgressFairness`` in ``spec/KRaftJBOD.tla``) with
the six progress properties on ``spec/NAME.cfg``'s bounds, and kraftcheck runs its liveness
phase on ``spec/configs/NAME.toml`` with ``progress = true``.  TLC names no property when
temporal properties are violated, so each property kraftcheck finds violated gets a TLC run of
its own, which must end in a temporal violation (exit 13), and the properties kraftcheck finds
holding get one run together, which must find none on the same number of states.

Only small state spaces: TLC evaluates the 40 fairness conjuncts (their ``ENABLED`` included)
on every state and step, and checks about 40 states a second here, where kraftcheck's liveness
phase takes under a second; ``lossyprogress`` itself (69,457 states) had not finished in 16
minutes.  So the cases below shrink the shipped configs to one broker where the verdict they
test survives it.  Not compared with TLC: the verdicts at the shipped configs' own bounds
(``tests/test_progress.py``) and ``unclean_election_not_retried``, which needs two brokers, a
restart and a directory failure (``uncleanprogress``: 57,389 states).
"""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

import pytest

import kraftcheck
from kraftcheck.checker.tlc import EXIT_LIVENESS, EXIT_OK, run_tlc

#: TLC's liveness checking takes minutes on these (one case 12): `make test-all` only, not CI
pytestmark = [pytest.mark.slow, pytest.mark.exhaustive]

SPEC = Path(importlib.resources.files("kraftcheck.spec"))
PROPERTIES = ("FailedDirLeadershipsMove", "RunningBrokerUnfenced", "AssignmentSettled", "LeaderlessPartitionElected",
              "ReportedFailureSettled", "DeadBrokerFenced")
#: the model settings a case changes, and the TLA+ constants that mirror them
CONSTANTS = {"brokers": "NumBrokers", "replication_factor": "ReplicationFactor", "restarts": "MaxRestarts",
             "dir_failures": "MaxDirFailures", "semantics": "Semantics", "mutant": "Mutant"}


def tlc_config(name: str, settings: dict, properties) -> str:
    """spec/NAME.cfg with ``settings`` applied, ``FairSpec`` for ``Init``/``Next``, and
    ``properties`` its only properties: no invariant, so that the safety findings of the code's
    reading do not stop TLC before its liveness checking."""
    cfg = (SPEC / f"{name}.cfg").read_text()
    cfg = cfg[: cfg.index("INVARIANTS")]
    for setting, value in settings.items():
        tla = f'"{value}"' if isinstance(value, str) else str(value)
        cfg, changed = re.subn(rf"(?m)^(\s+{CONSTANTS[setting]} = ).*$", lambda m: m.group(1) + tla, cfg)
        assert changed == 1, setting
    if "SPECIFICATION FairSpec" not in cfg:
        assert "INIT Init\nNEXT Next" in cfg
        cfg = cfg.replace("INIT Init\nNEXT Next", "SPECIFICATION FairSpec")
    return cfg + "PROPERTIES\n" + "".join(f"    {p}\n" for p in properties)


@pytest.mark.parametrize("name, settings, violated, states", [
    # the code's reading, one broker: every progress property holds past findings 1 and 2
    ("heartbeat", {}, set(), 657),
    ("heartbeat", {"semantics": "kip"}, set(), 579),
    # below 3.7-IV2 the failure is acknowledged and ignored (finding 4): the leadership stays
    ("oldmetadata", {}, {"FailedDirLeadershipsMove"}, 236),
    # a lossy network, one broker: every assignment lost is sent again
    ("lossyprogress", {"brokers": 1, "replication_factor": 1}, set(), 1_007),
    # ... unless the broker gives up after a lost response (a liveness mutant)
    ("lossyprogress", {"brokers": 1, "replication_factor": 1, "mutant": "assignment_not_retried"},
     {"FailedDirLeadershipsMove", "AssignmentSettled"}, 1_003),
    # finding 11: a crashed incarnation's late registration leaves the running one fenced for ever
    ("heartbeat", {"restarts": 1, "dir_failures": 0}, {"RunningBrokerUnfenced"}, 1_005),
    # the KIP's reading keeps a restarted broker fenced for ever (spec/README.md, "Progress")
    ("uuids", {"brokers": 1, "replication_factor": 1}, {"RunningBrokerUnfenced"}, 2_843),
    # Kafka 4.4.0's failover, one broker: the next controller fences the broker that died
    ("failoverprogress", {"brokers": 1, "replication_factor": 1}, set(), 364),
    # ... unless it gives no broker a session when it takes over (KAFKA-18138, a liveness mutant)
    ("failoverprogress", {"brokers": 1, "replication_factor": 1, "mutant": "failover_without_sessions"},
     {"DeadBrokerFenced"}, 404),
    # topic deletion, one broker: an assignment queued for a deleted topic is dropped unsent
    ("deletion", {"brokers": 1, "replication_factor": 1}, set(), 1_280),
    # ... unless the broker sends it, for ever (KAFKA-17190, a liveness mutant)
    ("deletion", {"brokers": 1, "replication_factor": 1, "mutant": "assignment_retried_for_deleted_topic"},
     {"AssignmentSettled"}, 1_280),
])
def test_tlc_gives_each_progress_property_kraftchecks_verdict(name, settings, violated, states):
    ours = kraftcheck.check(str(SPEC / "configs" / f"{name}.toml"), keep_going=True, progress=True, **settings)
    assert ours.distinct_states == states
    verdicts = ours.liveness["properties"]
    assert {p for p, verdict in verdicts.items() if verdict == "violated"} == violated
    assert set(verdicts) == set(PROPERTIES)
    for prop in sorted(violated):
        theirs = run_tlc(SPEC / "KRaftJBOD.tla", tlc_config(name, settings, [prop]), check_deadlock=False)
        assert (theirs.exit_code, theirs.violation_kind) == (EXIT_LIVENESS, "temporal"), (prop, theirs.output[-3000:])
    holding = [p for p in PROPERTIES if p not in violated]
    theirs = run_tlc(SPEC / "KRaftJBOD.tla", tlc_config(name, settings, holding), check_deadlock=False)
    assert (theirs.exit_code, theirs.violated, theirs.distinct) == (EXIT_OK, None, states), theirs.output[-3000:]
