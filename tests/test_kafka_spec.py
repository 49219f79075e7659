"""The TLA+ mirror: every module parses, and it names what the Python model names.

The parser is the ``tla`` package from PyPI (a TLA+ syntax parser in Python).  The
``tree-sitter-tlaplus`` grammar is also on PyPI but needs the ``tree_sitter`` runtime, which
the project does not depend on, so ``tla`` is the parser used here.
"""

from __future__ import annotations

import importlib.resources
import re
import tomllib
from pathlib import Path

import pytest
import tla

from kraftcheck.model import ACTIONS, VARIABLES, make_model
from kraftcheck.model.network import DELIVERY_ACTION

SPEC = Path(importlib.resources.files("kraftcheck.spec"))
MODULES = sorted(SPEC.glob("*.tla"))
CONFIGS = sorted((SPEC / "configs").glob("*.toml"))
TEXT = (SPEC / "KRaftJBOD.tla").read_text()


def test_there_is_a_module():
    assert [m.name for m in MODULES] == ["KRaftJBOD.tla"]


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_module_parses(module):
    tree = tla.parse(module.read_text())
    assert tree is not None


def test_parser_rejects_a_syntax_error():
    broken = TEXT.replace("/\\ dirFailures' = dirFailures + 1", "/\\ dirFailures' = = dirFailures + 1", 1)
    assert broken != TEXT
    with pytest.raises(Exception):
        tla.parse(broken)


def test_same_variables_in_the_same_order():
    declared = re.search(r"^VARIABLES\n(.*?)\n\n", TEXT, re.S | re.M).group(1)
    names = re.findall(r"^\s+(\w+),?\s*(?:\\\*.*)?$", declared, re.M)
    assert tuple(names) == VARIABLES
    vars_tuple = re.search(r"^vars == <<(.*?)>>", TEXT, re.S | re.M).group(1)
    assert tuple(v.strip() for v in vars_tuple.split(",")) == VARIABLES


def defined(name: str) -> bool:
    return re.search(rf"^{name}(\(.*?\))? ==", TEXT, re.M) is not None


def test_every_action_is_an_operator_taken_by_next():
    next_body = TEXT[TEXT.index("\nNext ==") : TEXT.index("\nSpec ==")]
    for action in ACTIONS:
        assert defined(action), action
        assert re.search(rf"\b{action}(\(|$)", next_body, re.M), action


def test_every_delivery_is_a_disjunct_of_its_own():
    """TLC's -coverage counts a disjunct of Next as one action: each delivery is its own."""
    next_body = TEXT[TEXT.index("\nNext ==") : TEXT.index("\nSpec ==")]
    delivered = re.findall(r"^    \\/ \\E m \\in BagToSet\(network\) : (\w+)\(m\)$", next_body, re.M)
    assert delivered == [
        "ControllerHandlesRegistration",
        "ControllerHandlesRegistrationAfterSessionTimeout",
        "BrokerReceivesRegistrationResponse",
        "ControllerHandlesHeartbeat",
        "ControllerTimesOutHeartbeat",
        "BrokerReceivesHeartbeatResponse",
        "ControllerHandlesAssignment",
        "BrokerReceivesAssignmentResponse",
        "ControllerHandlesAlterReplicaState",
        "ControllerHandlesAlterPartition",
        "BrokerReceivesAlterPartitionResponse",
        "NetworkLosesMessage",
    ]
    assert set(delivered) >= set(DELIVERY_ACTION.values())


def test_every_invariant_and_step_property_is_defined():
    model = make_model({})
    for name in model.invariants:
        assert defined(name), name
    for name in model.action_invariants:
        assert defined(name), name
        assert re.search(rf"^{name}Prop == \[\]\[{name}\]_vars$", TEXT, re.M), name


def test_every_mutant_is_in_the_module():
    for mutant in make_model({}).mutants:
        assert f'"{mutant}"' in TEXT, mutant


CONSTANTS = {
    "NumBrokers": "brokers",
    "DirsPerBroker": "dirs_per_broker",
    "NumPartitions": "partitions",
    "ReplicationFactor": "replication_factor",
    "MaxRestarts": "restarts",
    "CrashesAllowed": "crashes",
    "MaxDirFailures": "dir_failures",
    "MaxMessages": "max_messages",
    "MaxLosses": "max_losses",
    "MaxSessionExpiries": "session_expiries",
    "MaxCleanShutdowns": "clean_shutdowns",
    "LegacyBrokers": "legacy_brokers",
    "MaxMoves": "moves",
    "AlterReplicaStateEnabled": "alter_replica_state",
    "DesignatedEnabled": "designated",
    "Semantics": "semantics",
    "InitialMetadataVersion": "metadata_version",
    "MetadataUpgradeEnabled": "metadata_upgrade",
    "Failovers": "failovers",
    "MaxUncommitted": "max_uncommitted",
    "BrokerLag": "broker_lag",
    "MaxRecords": "records",
    "PowerLoss": "power_loss",
    "Fetch": "fetch",
    "MinIsr": "min_isr",
    "ElrEnabled": "elr",
    "UncleanElection": "unclean_election",
    "MaxMinIsrChanges": "min_isr_changes",
    "MaxUncleanToggles": "unclean_toggles",
    "PreferredElections": "preferred_elections",
    "TopicDeletion": "topic_deletion",
    "MaxReassignments": "reassignments",
    "MaxCordons": "cordons",
    "MaxToolRequests": "recovery_tool",
    "ToolEpoch": "tool_epoch",
    "ToolEpochCheck": "tool_epoch_check",
    "KafkaVersion": "kafka_version",
    "Mutant": "mutant",
}


def tla_value(value):
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


@pytest.mark.parametrize("toml", CONFIGS, ids=lambda p: p.stem)
def test_cfg_mirrors_toml(toml):
    cfg = SPEC / f"{toml.stem}.cfg"
    assert cfg.exists(), f"{cfg.name} missing"
    text = cfg.read_text()
    model = make_model(tomllib.loads(toml.read_text())["model"])
    constants = dict(re.findall(r"^\s+(\w+) = (.+)$", text, re.M))
    expected = {c: tla_value(getattr(model.settings, k)) for c, k in CONSTANTS.items()}
    expected["NoPartition"] = "NoPartition"
    assert constants == expected
    assert re.findall(r"^\s+(\w+)$", text.split("INVARIANTS")[1].split("PROPERTIES")[0], re.M) == list(model.invariants)
    properties = re.findall(r"^\s+(\w+)$", text.split("PROPERTIES")[1].split("\\*")[0], re.M)
    assert [p.removesuffix("Prop") for p in properties if p.endswith("Prop")] == list(model.action_invariants)
    # the progress properties under their fairness (FairSpec) where the model declares them
    assert [p for p in properties if not p.endswith("Prop")] == list(getattr(model, "temporal_properties", {}))
    assert ("SPECIFICATION FairSpec\n" in text, "INIT Init\nNEXT Next\n" in text) == (model.settings.progress,
                                                                                    not model.settings.progress)
    # TLC 2.15 refuses CHECK_DEADLOCK in a .cfg: the .toml's `deadlock` becomes TLC's -deadlock flag
    assert not re.search(r"^\s*CHECK_DEADLOCK", text, re.M)
    assert tomllib.loads(toml.read_text())["check"]["deadlock"] is False
    assert "off here, so TLC runs with -deadlock" in text


def test_every_cfg_has_a_toml():
    assert {p.stem for p in SPEC.glob("*.cfg")} == {p.stem for p in CONFIGS}
