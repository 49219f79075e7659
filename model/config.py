"""The model's settings: bounds, feature switches and mutants, read from a config's ``[model]`` table."""

from __future__ import annotations

import re
import reprlib
from dataclasses import dataclass, fields

from .mutants import MUTANTS
from .rules import KafkaRules

#: The readings of KIP-858 the model can follow: Kafka's controller code, or the KIP's text.
SEMANTICS = ("code", "kip")
#: Who may make an unclean leader election: nobody, an operator (ElectLeaders UNCLEAN), or the
#: controller itself (the topic's unclean.leader.election.enable).
UNCLEAN_ELECTIONS = ("off", "admin", "topic")
#: The leader epoch the recovery tool ranks replicas by: KIP-1275's (the partition's current leader
#: epoch in the answering broker's metadata) or KIP-966's (the epoch of the log's last record).
TOOL_EPOCHS = ("current", "last_written")
#: How a follower's fetch is modeled: "whole_log", one step that truncates the follower's log to where
#: it agrees with the leader's and copies the rest, the leader learning the new log end offset at
#: once; or "batch", Kafka's fetch protocol (AbstractFetcherThread, Partition.fetchRecords): a fetch
#: carries the follower's log end offset and last fetched epoch, and takes one record batch or a
#: diverging epoch to truncate by.
FETCHES = ("whole_log", "batch")
#: The metadata versions the model tells apart: below IBP_3_6_IV0 (the controller bumps the leader
#: epoch on an ISR shrink, KAFKA-15021), below IBP_3_7_IV2 (no directory assignment), and
#: IBP_3_7_IV2 (KIP-858 in force).
METADATA_VERSIONS = ("3.5-IV2", "3.6-IV2", "3.7-IV2")
#: The controller code the model follows by default: apache/kafka trunk at commit 1eb7644349c
#: (October 2024), which the model was read from.  A release X.Y.Z from 4.0.0 to 4.4.0 instead
#: makes the model follow the rules that release changed (``KafkaRules``), each checked against
#: that release's controller by ``kraftcheck conform`` (tests/test_conform.py).
KAFKA_CODE_READ = "1eb7644"
#: The releases whose rules the model knows: every one Maven Central serves here, 4.0.0 to 4.4.0.
KAFKA_RELEASES = ("4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.1.1", "4.1.2", "4.2.0", "4.2.1", "4.2.2", "4.3.0", "4.3.1", "4.4.0")


@dataclass(frozen=True)
class Settings:
    """Bounds and switches.  Defaults are those of ``spec/configs/default.toml``."""

    brokers: int = 2
    dirs_per_broker: int = 2
    partitions: int = 1
    replication_factor: int = 2
    #: broker restarts in the whole run, beyond each broker's first start
    restarts: int = 1
    #: a running broker's process may crash (BrokerCrashes); false: brokers stop only by the other
    #: ways the settings allow (a power loss, a controlled shutdown, a directory failure's timeout),
    #: which keeps a data plane of three brokers small enough to search whole
    crashes: bool = True
    #: directory failures in the whole run
    dir_failures: int = 1
    #: messages in flight at once (requests and responses)
    max_messages: int = 2
    #: messages the network may lose in the whole run
    max_losses: int = 0
    #: times in the whole run the controller's heartbeat session of a running broker may expire:
    #: its process paused past broker.session.timeout.ms, or its heartbeats lost or late for that
    #: long; the controller fences it, and it comes back as the same incarnation
    session_expiries: int = 0
    #: controlled shutdowns in the whole run (0: the model's brokers only ever stop uncleanly): a
    #: running broker asks to shut down in its heartbeats (wantShutDown), the controller moves its
    #: leaderships and ISR memberships away and tells it when to stop (shouldShutDown), and the
    #: broker writes its epoch in clean-shutdown files that its next incarnation registers with
    #: (previousBrokerEpoch); Kafka's code only (semantics "code"), without failovers
    clean_shutdowns: int = 0
    #: the first ``legacy_brokers`` brokers register without directories (an old metadata version)
    legacy_brokers: int = 0
    #: intra-broker replica moves in the whole run (0: the feature is off)
    moves: int = 0
    #: KIP-589: brokers also report replicas in failed directories with AlterReplicaState
    alter_replica_state: bool = False
    #: KIP-1275: an operator may run designated leader elections
    designated: bool = False
    #: where KIP-858's text and Kafka's controller code differ, which one the model follows:
    #: "code" (the default) or "kip" (spec/README.md lists the differences)
    semantics: str = "code"
    #: the cluster's metadata.version at the start: "3.7-IV2", "3.6-IV2" (below it) or "3.5-IV2"
    #: (below 3.6-IV0 too: an ISR shrink bumps the leader epoch)
    metadata_version: str = "3.7-IV2"
    #: an operator may upgrade the metadata version to 3.7-IV2 during the run
    metadata_upgrade: bool = False
    #: controller failovers in the whole run; 0: the metadata log is not modeled, and every
    #: write is committed, and answered, at once
    failovers: int = 0
    #: batches of records appended and not yet committed at once (with failovers)
    max_uncommitted: int = 2
    #: brokers act on the metadata they have loaded, which lags the controller's: each keeps its
    #: own image, brought up to date by BrokerLoadsMetadata (false: every broker reads the
    #: latest committed metadata at once)
    broker_lag: bool = False
    #: the data plane: records producers write (acks=all) in the whole run; replicas keep logs,
    #: followers fetch, leaders change the ISR with AlterPartition (0: no logs at all)
    records: int = 0
    #: how followers fetch (FETCHES): "whole_log" (the default) takes the leader's whole log in one
    #: step; "batch" follows Kafka's fetch protocol: the follower sends its log end offset and the
    #: epoch of its leader-epoch cache's last entry, the leader answers with one record (a batch) and
    #: its high watermark as it stood before it read the fetch, or with the epoch and end offset its
    #: log diverges at, which the follower truncates by, round after round (KIP-279, KIP-595); a new
    #: leader assigns its epoch in its leader-epoch cache as it takes the lead (LeaderStartsEpoch)
    fetch: str = "whole_log"
    #: a running broker's machine may lose power (BrokerLosesPower): the process stops and each of
    #: its replicas' logs keeps only what it had flushed (the page cache goes with the machine);
    #: logs are flushed now and then (BrokerFlushesLog), and by a clean shutdown; a process that
    #: only crashes (BrokerCrashes) loses nothing
    power_loss: bool = False
    #: min.insync.replicas: a leader takes a record only with at least this many in its ISR
    min_isr: int = 1
    #: times in the whole run an operator sets the topic's min.insync.replicas to another value (1 to
    #: replication_factor) while the cluster runs (kafka-configs --alter: IncrementalAlterConfigs); with
    #: ELR the controller clears the topic's eligible leader replicas in the same batch (ClearElrRecord,
    #: KAFKA-16540); leaders and elections read the new value
    min_isr_changes: int = 0
    #: times in the whole run an operator turns the topic's unclean.leader.election.enable on or off while
    #: the cluster runs; it starts on with unclean_election = "topic", else off, and the controller's
    #: elections and its periodic unclean election read its current value (KAFKA-12670)
    unclean_toggles: int = 0
    #: an operator may run preferred leader elections (kafka-leader-election --election-type preferred),
    #: which the controller's auto.leader.rebalance.enable also runs on its own with the same record
    preferred_elections: bool = False
    #: KIP-1066: times in the whole run an operator cordons or uncordons one of a broker's log
    #: directories (kafka-configs --alter --entity-type brokers: cordoned.log.dirs, a broker config the
    #: broker applies at once and keeps across restarts); the broker reports the cordoned directories'
    #: IDs in its heartbeats once it has caught up, the controller keeps them in the broker's
    #: registration and refuses a new partition a broker with every directory cordoned would hold, and
    #: the broker places no new replica in a cordoned directory while it has another one.  Kafka 4.3.0
    #: or later (metadata version 4.3-IV0), without failovers (0: the feature is off)
    cordons: int = 0
    #: an operator may delete topics (kafka-topics --delete: DeleteTopics): the controller writes a
    #: RemoveTopicRecord, brokers delete the deleted topic's replicas, and a broker's directory
    #: assignments queued for it are dropped before they are sent (AssignmentsManager); a deleted topic
    #: is not created again.  Without the data plane and the recovery tool (false: the feature is off)
    topic_deletion: bool = False
    #: times in the whole run an operator reassigns a partition (kafka-reassign-partitions --execute:
    #: AlterPartitionReassignments, to any list of registered brokers one to replication_factor long)
    #: or cancels a reassignment under way (--cancel); the controller adds the new replicas at once and
    #: removes the old ones once the ISR holds every new one, and a broker no longer a replica deletes
    #: its replica and drops a directory assignment it queued for it.  Without the recovery tool and
    #: cordons (0: the feature is off)
    reassignments: int = 0
    #: eligible leader replicas (KIP-966), standing for metadata version 4.0-IV1 or later: an ISR
    #: may shrink to nothing, its lost members stay eligible, and a new incarnation's
    #: registration takes its broker out of ISRs and ELRs (unclean shutdown)
    elr: bool = False
    #: unclean leader elections: "off"; "admin" (an operator may run kafka-leader-election
    #: --election-type unclean for a leaderless partition); "topic" (the topic's
    #: unclean.leader.election.enable: every election may fall back to any acceptable replica,
    #: and the controller elects one for a leaderless partition on its own)
    unclean_election: str = "off"
    #: KIP-1275's recovery tool (kafka-unclean-recovery.sh): the requests it may send in the whole
    #: run (GetReplicaLogInfo and ElectLeaders DESIGNATED alike), its deadline; 0: not run
    recovery_tool: int = 0
    #: the leader epoch a replica's GetReplicaLogInfo answer carries, which the tool ranks first:
    #: "current", KIP-1275's PartitionLeaderEpoch (the partition's leader epoch in the broker's
    #: metadata); "last_written", KIP-966's LastWrittenLeaderEpoch (the epoch of the log's last record)
    tool_epoch: str = "current"
    #: the tool's ElectLeaders DESIGNATED carries the partition's leader epoch as the tool took the
    #: partition up, and the controller refuses it (FENCED_LEADER_EPOCH) once that epoch has moved
    #: on: not in KIP-1275, the fix finding 10 proposes
    tool_epoch_check: bool = False
    #: the Kafka controller the model follows (semantics "code"): "1eb7644", the code it was read
    #: from (the default), or a release from "4.0.0" to "4.4.0"
    kafka_version: str = KAFKA_CODE_READ
    #: the progress properties (model/progress.py) and their fairness: the check's liveness phase
    #: holds every behaviour to them
    progress: bool = False
    mutant: str = "none"

    @property
    def shutdown_files(self) -> bool:
        """Are the clean-shutdown files modeled (and with them the controlled-shutdown state)?
        With controlled shutdowns, which write them, and with power losses, whose detection at
        the next registration reads them."""
        return self.clean_shutdowns > 0 or self.power_loss

    @property
    def dynamic_configs(self) -> bool:
        """Are the topic's configs state (topicConfig), altered while the cluster runs?"""
        return self.min_isr_changes > 0 or self.unclean_toggles > 0

    @property
    def kafka_release(self) -> tuple[int, int, int] | None:
        """(4, minor, patch) of the release followed; None for the code read."""
        if self.kafka_version not in KAFKA_RELEASES:
            return None
        major, minor, patch = (int(x) for x in self.kafka_version.split("."))
        return major, minor, patch


KNOWN = tuple(f.name for f in fields(Settings))
#: Largest value of the settings that count events in a run or messages in flight.  The state
#: space grows exponentially with each: a search with a few of them already runs for hours.
MAX_COUNT = 100


def parse_settings(config: dict | None) -> Settings:
    """Settings from a ``[model]`` table (already merged with ``--set`` overrides).

    Raises ``ValueError`` with one line naming the bad key or value.
    """
    config = dict(config or {})
    for key in config:
        if key not in KNOWN:
            raise ValueError(f"unknown model setting {reprlib.repr(key)} (known: {', '.join(KNOWN)})")
    values = {}
    defaults = Settings()
    for key, value in config.items():
        default = getattr(defaults, key)
        if isinstance(default, bool):
            value = _as_bool(key, value)
        elif isinstance(default, int):
            value = _as_int(key, value)
        elif key in ("semantics", "metadata_version", "unclean_election", "tool_epoch", "kafka_version", "fetch"):
            value = str(value)
        else:
            value = "none" if value in (None, "", False) else str(value)
        values[key] = value
    settings = Settings(**values)
    _validate(settings)
    return settings


def _as_bool(key, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if type(value) is int and value in (0, 1):
        return bool(value)
    raise ValueError(f"model setting {key!r} must be true or false, not {reprlib.repr(value)}")


def _as_int(key, value):
    """An integer setting takes an integer, or an integer's decimal digits as text (a command
    line's string): ``1.9``, ``2.0``, ``inf`` or ``1e30`` would be rounded or rejected by
    ``int()`` out of sight."""
    if type(value) is int:
        return value
    if isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]{1,18}", value.strip()):
        return int(value)
    raise ValueError(f"model setting {key!r} must be an integer, not {reprlib.repr(value)}")


def _validate(s: Settings) -> None:
    def need(ok, message):
        if not ok:
            raise ValueError(message)

    r = reprlib.repr
    need(1 <= s.brokers <= 5, f"model setting 'brokers' must be between 1 and 5, not {r(s.brokers)}")
    need(1 <= s.dirs_per_broker <= 4, f"model setting 'dirs_per_broker' must be between 1 and 4, not {r(s.dirs_per_broker)}")
    need(1 <= s.partitions <= 4, f"model setting 'partitions' must be between 1 and 4, not {r(s.partitions)}")
    need(
        1 <= s.replication_factor <= s.brokers,
        f"model setting 'replication_factor' must be between 1 and brokers ({s.brokers}), not {r(s.replication_factor)}",
    )
    for key in ("restarts", "dir_failures", "max_losses", "session_expiries", "clean_shutdowns", "moves", "failovers", "records",
                "recovery_tool", "min_isr_changes", "unclean_toggles", "cordons", "reassignments"):
        value = getattr(s, key)
        need(0 <= value <= MAX_COUNT, f"model setting {key!r} must be between 0 and {MAX_COUNT}, not {reprlib.repr(value)}")
    need(1 <= s.max_messages <= MAX_COUNT,
         f"model setting 'max_messages' must be between 1 and {MAX_COUNT}, not {reprlib.repr(s.max_messages)}")
    need(1 <= s.max_uncommitted <= MAX_COUNT,
         f"model setting 'max_uncommitted' must be between 1 and {MAX_COUNT}, not {reprlib.repr(s.max_uncommitted)}")
    need(
        1 <= s.min_isr <= s.replication_factor,
        f"model setting 'min_isr' must be between 1 and replication_factor ({s.replication_factor}), not {r(s.min_isr)}",
    )
    need(s.min_isr_changes == 0 or s.replication_factor >= 2,
         "model setting 'min_isr_changes' needs replication_factor >= 2: min.insync.replicas has no other value to take")
    need(not s.elr or (s.semantics == "code" and s.metadata_version == "3.7-IV2" and not s.metadata_upgrade),
         "model setting 'elr' needs semantics = \"code\" and metadata_version = \"3.7-IV2\" without metadata_upgrade: "
         "ELR comes with metadata version 4.0-IV1, in Kafka's code")
    need(s.recovery_tool == 0 or s.records > 0,
         "model setting 'recovery_tool' needs records > 0: the tool compares the replicas' logs")
    need(not s.power_loss or s.records > 0,
         "model setting 'power_loss' needs records > 0: only the replicas' logs have anything to lose")
    need(s.records == 0 or not s.broker_lag,
         "model setting 'records' needs broker_lag = false: the data plane reads the latest committed metadata")
    need(s.failovers == 0 or s.semantics == "code",
         "model setting 'failovers' needs semantics = \"code\": under the KIP's reading the controller writes no records")
    need(s.clean_shutdowns == 0 or (s.semantics == "code" and s.failovers == 0),
         "model setting 'clean_shutdowns' needs semantics = \"code\" and failovers = 0: controlled shutdown is "
         "modeled as Kafka's controller does it, and its heartbeat state is not rebuilt by a failover")
    need(
        0 <= s.legacy_brokers <= s.brokers,
        f"model setting 'legacy_brokers' must be between 0 and brokers ({s.brokers}), not {r(s.legacy_brokers)}",
    )
    need(s.semantics in SEMANTICS, f"model setting 'semantics' must be one of {', '.join(SEMANTICS)}, not {s.semantics!r}")
    need(
        s.metadata_version in METADATA_VERSIONS,
        f"model setting 'metadata_version' must be one of {', '.join(METADATA_VERSIONS)}, not {s.metadata_version!r}",
    )
    need(s.fetch in FETCHES, f"model setting 'fetch' must be one of {', '.join(FETCHES)}, not {r(s.fetch)}")
    need(s.fetch == "whole_log" or s.records > 0,
         "model setting 'fetch' needs records > 0: only the replicas' logs are fetched")
    need(s.tool_epoch in TOOL_EPOCHS,
         f"model setting 'tool_epoch' must be one of {', '.join(TOOL_EPOCHS)}, not {r(s.tool_epoch)}")
    need(s.unclean_election in UNCLEAN_ELECTIONS,
         f"model setting 'unclean_election' must be one of {', '.join(UNCLEAN_ELECTIONS)}, not {r(s.unclean_election)}")
    need(s.kafka_version == KAFKA_CODE_READ or s.kafka_version in KAFKA_RELEASES,
         f"model setting 'kafka_version' must be {KAFKA_CODE_READ} or a release from 4.0.0 to 4.4.0 "
         f"({', '.join(KAFKA_RELEASES)}), not {r(s.kafka_version)}")
    need(s.kafka_version == KAFKA_CODE_READ or s.semantics == "code",
         "model setting 'kafka_version' needs semantics = \"code\": a release's rules are its code's")
    need(s.cordons == 0 or (KafkaRules.of(s.kafka_release).cordoned_dirs and s.failovers == 0 and s.legacy_brokers == 0
                            and s.metadata_version == "3.7-IV2" and not s.metadata_upgrade),
         "model setting 'cordons' needs kafka_version 4.3.0 or later, failovers = 0, legacy_brokers = 0 and "
         "metadata_version = \"3.7-IV2\" without metadata_upgrade: cordoned directories (KIP-1066) come with "
         "Kafka 4.3.0 and metadata version 4.3-IV0, and the registrations' cordons are not rebuilt by a failover")
    need(not s.topic_deletion or (s.records == 0 and s.recovery_tool == 0),
         "model setting 'topic_deletion' needs records = 0 and recovery_tool = 0: a deleted topic's records are "
         "not modeled")
    need(s.reassignments == 0 or (s.recovery_tool == 0 and s.cordons == 0),
         "model setting 'reassignments' needs recovery_tool = 0 and cordons = 0: the tool's replicas and the "
         "cordoned brokers' placement are not modeled for a reassigned partition")
    if s.mutant != "none" and s.mutant not in MUTANTS:
        raise ValueError(f"unknown mutant {r(s.mutant)} (known: {', '.join(MUTANTS)})")
