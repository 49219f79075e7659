"""The mutants: known Kafka bugs put back into the model, one switch each (``mutant = "..."`` in a
config's ``[model]`` table).  The model's actions test ``self.mutant`` where the bug lived."""

#: name -> one-line description of the bug the switch puts back.  Each is caught by the
#: invariant named in spec/README.md.
MUTANTS = {
    "skip_epoch_check": "the controller acts on heartbeats, AssignReplicasToDirs and AlterReplicaState "
    "whatever their broker epoch (KIP-589's epoch gate removed)",
    "stale_offline_dirs": "the controller applies the offline directories of a heartbeat before its epoch "
    "check, so a repaired broker is marked offline by its own old request",
    "elect_ignoring_dirs": "leader election looks at fencing only, not at the replica's directory",
    "no_dirs_all_offline": "a broker that registered no directories counts as having every directory "
    "offline (KAFKA-16162)",
    "reserved_uuids": "formatting may generate a reserved directory UUID and the controller does not "
    "reject it at registration",
    "unfence_before_assigned": "the controller unfences a broker while metadata still holds one of its "
    "replicas UNASSIGNED",
    "recreate_elsewhere": "a broker recreates a replica in another directory when its assigned directory "
    "is offline (KAFKA-16234)",
    "foreign_offline_dirs": "the controller judges every replica of a partition against the heartbeat "
    "sender's directory list, so one broker's offline directory takes other brokers' replicas out",
    "designated_with_leader": "a designated election goes ahead although the partition has a leader",
    "no_revert_on_dest_failure": "a broker does not revert a move's assignment when the destination "
    "directory fails before the future replica is promoted (KAFKA-16297)",
    "no_lost_on_source_failure": "a broker does not assign a moving replica to LOST when the move's source "
    "directory fails, so the controller never learns the replica is offline",
    "keep_source_after_promotion": "promoting a future replica does not delete the source replica",
    "fenced_leader_kept": "fencing a broker whose session expired does not take away its leaderships",
    "keep_offline_replica_in_isr": "a directory failure moves leadership away but leaves the replica in the ISR",
    "unfence_without_election": "unfencing a broker does not elect leaders for leaderless partitions",
    "accept_older_registration": "the controller accepts a registration carrying an older broker epoch "
    "than the registered one",
    "reregistration_new_epoch": "re-registering the same incarnation gives the broker a new broker epoch "
    "(KAFKA-16952)",
    "reregistration_fences": "re-registering the same incarnation writes a RegisterBrokerRecord with the "
    "record's default flags, so a running, unfenced broker comes out fenced (KAFKA-16757)",
    "jbod_below_3_7_iv2": "a broker with several log directories starts below metadata version 3.7-IV2, "
    "where the controller ignores its directory failures (KAFKA-16606)",
    "replay_ignores_log_dirs": "replaying a BrokerRegistrationChangeRecord ignores its logDirs, so a directory "
    "failure the active controller handled is not in what the metadata log rebuilds (KAFKA-15364); "
    "seen with failovers",
    "elect_unacceptable_last_leader": "with ELR, a partition whose ISR and ELR are empty elects its last known "
    "leader though it is not acceptable (fenced, or its directory offline) (KAFKA-19522)",
    "alter_partition_stale_broker_epoch": "AlterPartition takes an ISR member whose broker epoch in the request "
    "is not its registered one: a follower restarted since its fetch rejoins the ISR (KAFKA-14617)",
    "fenced_replica_joins_isr": "AlterPartition takes a fenced replica into the ISR: the controller's half of "
    "KIP-841 missing (KAFKA-13916), so a follower fenced after its leader asked joins all the same",
    "unclean_reregistration_keeps_epochs": "with ELR, a new incarnation's registration writes no leader and ISR "
    "changes (handleBrokerUncleanShutdown skipped), so the old incarnation keeps its leaderships in their "
    "epochs (KAFKA-18106; Kafka 3.x without ELR: finding 3)",
    "clean_shutdown_undetected": "a new incarnation's registration is taken as an unclean shutdown whatever its "
    "previousBrokerEpoch, so a broker that shut down cleanly leaves every ELR (KAFKA-18635: detection off)",
    "unclean_shutdown_kept_in_elr": "a new incarnation's registration is taken as a clean shutdown whatever its "
    "previousBrokerEpoch, so a broker that crashed, or lost its disk, stays an eligible leader replica (KAFKA-15586 "
    "missing)",
    "unclean_not_recovering": "an unclean election does not mark its leader RECOVERING (before KIP-704): "
    "nobody knows which acknowledged records it gave up",
    "assignment_retried_for_deleted_topic": "a broker sends a directory assignment it queued although the topic "
    "has since been deleted, and after each UNKNOWN_TOPIC_ID answer sends it again, for ever (KAFKA-17190)",
    "assignment_retried_for_reassigned_replica": "a broker sends a directory assignment it queued although a "
    "reassignment has since taken its replica away, and after each NOT_LEADER_OR_FOLLOWER answer sends it again, "
    "for ever (KAFKA-16886)",
    "assignment_not_retried": "a broker whose AssignReplicasToDirs request or response was lost keeps the "
    "assignment queued and never sends it again (liveness only: AssignmentSettled)",
    "unclean_election_not_retried": "with the topic's unclean.leader.election.enable, the controller runs no "
    "periodic unclean election: a leaderless partition gets an unclean leader only from the election of the "
    "fencing, unfencing or registration that left it leaderless, never later (liveness only: "
    "LeaderlessPartitionElected)",
    "failover_without_sessions": "with a release's heartbeat sessions (kafka_version), a controller taking over "
    "gives no broker a session (ClusterControlManager.activate registers the brokers but records no contact time): "
    "a broker that dies as the controller fails over, before its next heartbeat, is never fenced (KAFKA-18138; "
    "liveness only: DeadBrokerFenced)",
    "power_loss_reported_clean": "after a power loss the broker registers with its last broker epoch as "
    "previousBrokerEpoch, as after a clean shutdown (KAFKA-15582 missing: the broker's half of clean shutdown "
    "detection), so a replica that lost its unflushed records stays an eligible leader replica",
    "min_isr_change_keeps_elr": "altering min.insync.replicas leaves the eligible leader replicas as they are "
    "(KAFKA-16540 missing: no ClearElrRecord), so a replica that left the ISR under the old value stays eligible "
    "under the new one, which let a smaller ISR commit records it lacks",
    "unclean_config_read_statically": "the controller's elections read unclean.leader.election.enable as the cluster "
    "started, not as an operator altered it while it runs (KAFKA-12670's dynamic path missing): turned off, the "
    "controller still elects unclean leaders",
    "cordons_only_of_online_dirs": "the controller keeps only the reported cordoned directories that its registration "
    "lists online, and writes nothing when none is (KAFKA-20441 missing: apache/kafka trunk before it): an "
    "uncordoned broker stays cordoned, and a cordoned offline directory is forgotten",
    "log_dirs_ignore_cordons": "a broker places a new replica in its least-loaded directory, cordoned or not "
    "(LogManager.nextLogDirs as it was before KAFKA-19774)",
    "diverging_epoch_ignored": "a follower takes a fetch response with a diverging epoch for an empty one: it takes "
    "the leader's high watermark and never truncates (KAFKA-10554 missing: truncation on the fetch response)",
    "high_watermark_before_truncation": "a follower takes the leader's high watermark from a fetch response that "
    "carries a diverging epoch before it truncates (KAFKA-14704 missing): for a moment its high watermark covers "
    "records that diverge from the leader's log",
    "single_truncation": "a follower told that its log diverges truncates once, to the lesser of the leader's end "
    "offset for its last fetched epoch and its own log end offset, the epochs not compared, and fetches from there "
    "(KAFKA-6361: KIP-101 before KIP-279): a follower holding a record of an epoch its leader never had, at an offset "
    "the leader holds, keeps it",
    "isr_join_below_epoch_start": "a leader takes a follower into the ISR once its log end offset reaches the "
    "leader's high watermark, though not the offset the leader's epoch began at (KAFKA-7128 missing): a new leader's "
    "high watermark lags the records its predecessor committed, and a follower without them joins the ISR",
    "new_epoch_not_cached": "a new leader does not assign its epoch in its leader-epoch cache before it has a record "
    "of it (KAFKA-7415 missing): a follower whose last record is of a later epoch than any record the leader holds, "
    "and whose log is no shorter, is answered OFFSET_OUT_OF_RANGE and never truncates (liveness only: "
    "DivergedFollowerTruncates)",
    "no_leader_epoch_bump_on_isr_shrink": "below metadata version 3.6-IV0, an ISR shrink keeps the leader epoch, "
    "which the brokers' replica manager of those versions needs bumped (KAFKA-15021)",
}


#: The mutants that break only progress properties: the liveness phase catches them (with the model
#: setting ``progress``), the search for invariant violations and simulation do not.
LIVENESS_MUTANTS = ("assignment_not_retried", "unclean_election_not_retried", "failover_without_sessions",
                    "new_epoch_not_cached", "assignment_retried_for_deleted_topic",
                    "assignment_retried_for_reassigned_replica")

#: The shipped config (spec/configs/NAME.toml) that catches each mutant first, as spec/README.md's
#: mutant table says; ``kraftcheck list`` shows it and tests/test_mutants.py holds it to the table.
CAUGHT_AT = {
    "skip_epoch_check": "epochgate",
    "stale_offline_dirs": "epochgate",
    "accept_older_registration": "epochgate",
    "elect_ignoring_dirs": "alterreplicastate",
    "no_dirs_all_offline": "legacy",
    "reserved_uuids": "uuids",
    "unfence_before_assigned": "alterreplicastate",
    "recreate_elsewhere": "moves",
    "foreign_offline_dirs": "designated",
    "designated_with_leader": "designated",
    "no_revert_on_dest_failure": "moves",
    "no_lost_on_source_failure": "moves",
    "keep_source_after_promotion": "moves",
    "fenced_leader_kept": "epochgate",
    "keep_offline_replica_in_isr": "designated",
    "unfence_without_election": "epochgate",
    "reregistration_new_epoch": "upgrade",
    "reregistration_fences": "upgrade",
    "jbod_below_3_7_iv2": "jbodupgrade",
    "elect_unacceptable_last_leader": "elr",
    "unclean_reregistration_keeps_epochs": "elr",
    "alter_partition_stale_broker_epoch": "rejoin",
    "fenced_replica_joins_isr": "livefencing",
    "clean_shutdown_undetected": "cleanshutdown",
    "unclean_shutdown_kept_in_elr": "elr44",
    "unclean_not_recovering": "unclean",
    "power_loss_reported_clean": "powerloss",
    "no_leader_epoch_bump_on_isr_shrink": "isrshrink",
    "min_isr_change_keeps_elr": "dynamicconfig",
    "unclean_config_read_statically": "uncleantoggle",
    "replay_ignores_log_dirs": "failoverjbod",
    "cordons_only_of_online_dirs": "cordons",
    "high_watermark_before_truncation": "fetch",
    "diverging_epoch_ignored": "fetch",
    "single_truncation": "fetchprogress",
    "isr_join_below_epoch_start": "fetchelection",
    "log_dirs_ignore_cordons": "cordons",
    "assignment_not_retried": "lossyprogress",
    "unclean_election_not_retried": "uncleanprogress",
    "failover_without_sessions": "failoverprogress",
    "new_epoch_not_cached": "fetchprogress",
    "assignment_retried_for_deleted_topic": "deletion",
    "assignment_retried_for_reassigned_replica": "reassignment",
}
