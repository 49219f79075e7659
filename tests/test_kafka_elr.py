"""ELR (KIP-966), unclean elections and the leader's recovery state, as Kafka's builder and
controller do them.

The builder scenarios are those of ``PartitionChangeBuilderTest`` (``testEligibleLeaderReplicas_*``,
``testElectLastKnownLeader*``, ``testUncleanLeaderElection*``) and the AlterPartition ones those of
``ReplicationControlManagerTest`` (``testAlterPartitionInvalidRequest...``, leader recovery state);
each states the record Kafka's test expects.
"""

from __future__ import annotations

from kraftcheck.model.state import (
    KEPT, LOST_BY_DISK, LOST_BY_ELECTION,
    ACKED, ALTER_PARTITION_RESPONSE, DIRS, ELR, FENCED, HIGH_WATERMARK, ISR, LAST_KNOWN_ELR, LEADER, LEADER_EPOCH,
    NO_LEADER_CHANGE, PARTITION, PARTITION_CHANGE, PARTITION_EPOCH, RECOVERING, REPLICAS, except_at,
)

from .test_kafka_dataplane import alter_partition, cluster
from .test_kafka_scenarios import deliver, step

ELR_ON = {"elr": True, "min_isr": 2}


def with_partition(model, state, leader, isr, elr=(), known=(), recovering=False):
    """Partition 0 as given (epochs as they are)."""
    part = state[PARTITION][0]
    part = (leader, tuple(isr), part[DIRS], part[LEADER_EPOCH], part[PARTITION_EPOCH], tuple(elr), tuple(known), recovering,
            part[REPLICAS], (), ())
    return model._with(state, partition=except_at(state[PARTITION], 0, part))


def fenced(model, state, *brokers):
    fence = state[FENCED]
    for b in brokers:
        fence = except_at(fence, b, True)
    return model._with(state, fenced=fence)


def test_an_isr_shrinking_below_min_isr_keeps_what_it_lost_as_elr():
    """testEligibleLeaderReplicas_IsrShrinkBelowMinISR: ISR [0, 1] to [0] with min ISR 2: ELR [1]."""
    model, state = cluster(**ELR_ON)
    record = model.partition_change_record(state, 0, remove=1)
    assert record == (PARTITION_CHANGE, 0, NO_LEADER_CHANGE, (0,), None, (1,), None, None, None, None, None)


def test_an_isr_back_at_min_isr_clears_the_elr():
    """testEligibleLeaderReplicas_IsrExpandAboveMinISR: ISR [0] and ELR [1] to ISR [0, 1]: ELR []."""
    model, state = cluster(**ELR_ON)
    state = with_partition(model, state, 0, (0,), elr=(1,))
    record = model.partition_change_record(state, 0, target_isr=(0, 1))
    assert record == (PARTITION_CHANGE, 0, NO_LEADER_CHANGE, (0, 1), None, (), None, None, None, None, None)


def test_an_empty_isr_elects_from_the_elr_clean():
    """testEligibleLeaderReplicas_ElrCanBeElected: ISR [], ELR [0, 1], broker 0 fenced: broker 1
    leads, as the ISR alone, the ELR keeps broker 0, and nothing is RECOVERING."""
    model, state = cluster(**ELR_ON)
    state = fenced(model, with_partition(model, state, -1, (), elr=(0, 1), known=(0,)), 0)
    record = model.partition_change_record(state, 0)
    assert record == (PARTITION_CHANGE, 0, 1, (1,), None, (0,), (), None, None, None, None)


def test_without_elr_the_last_member_stays_in_the_isr():
    """Without ELR the builder never writes an empty ISR: fencing the last member leaves it there."""
    model, state = cluster()
    state = with_partition(model, state, 0, (0,))
    assert model.partition_change_record(state, 0, remove=0) == (PARTITION_CHANGE, 0, -1, None, None, None, None, None, None, None, None)


def test_an_unclean_shutdown_leaves_the_isr_and_the_elr():
    """testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr: broker 1 registers anew:
    out of the ELR, and never an eligible leader again from this record."""
    model, state = cluster(**ELR_ON)
    state = with_partition(model, state, -1, (), elr=(0, 1), known=(0,))
    state = fenced(model, state, 0)
    record = model.partition_change_record(state, 0, unclean_shutdown=1)
    assert record == (PARTITION_CHANGE, 0, NO_LEADER_CHANGE, None, None, (0,), None, None, None, None, None)


def test_a_leader_losing_the_last_isr_member_becomes_the_last_known_leader():
    """maybeUpdateLastKnownLeader: the record that empties the ISR names the leader it had."""
    model, state = cluster(**ELR_ON)
    state = with_partition(model, state, 0, (0,), elr=(1,))
    state = fenced(model, state, 1)
    record = model.partition_change_record(state, 0, remove=0)
    assert record == (PARTITION_CHANGE, 0, -1, (), None, (0, 1), (0,), None, None, None, None)


def test_the_last_known_leader_is_elected_only_when_acceptable():
    """canElectLastKnownLeader with KAFKA-19522 fixed: ISR and ELR empty, the last known leader
    elected if acceptable (unclean: RECOVERING with the data plane), not while it is fenced; the
    mutant elects it fenced."""
    model, state = cluster(**ELR_ON)
    state = with_partition(model, state, -1, (), known=(0,))
    assert model.partition_change_record(state, 0) == (PARTITION_CHANGE, 0, 0, (0,), None, None, (), True, None, None, None)
    state = fenced(model, state, 0)
    assert model.partition_change_record(state, 0) is None
    buggy, _ = cluster(**ELR_ON, mutant="elect_unacceptable_last_leader")
    assert buggy.partition_change_record(state, 0) == (PARTITION_CHANGE, 0, 0, (0,), None, None, (), True, None, None, None)


def test_an_unclean_election_takes_any_acceptable_replica_alone_and_recovering():
    """testUncleanLeaderElection: ISR [0], broker 0 fenced, broker 1 outside the ISR: with an
    UNCLEAN election broker 1 leads as the ISR alone, RECOVERING; an ONLINE one elects nobody."""
    model, state = cluster(unclean_election="topic")
    state = fenced(model, with_partition(model, state, -1, (0,)), 0)
    assert model.partition_change_record(state, 0, election="online") is None
    assert model.partition_change_record(state, 0) == (PARTITION_CHANGE, 0, 1, (1,), None, None, None, True, None, None, None)


def test_the_admins_unclean_election_and_its_knowing_loss():
    """kafka-leader-election --election-type unclean: broker 0 acknowledged a record alone (ISR
    [0]) and is fenced; the admin elects broker 1, which lacks it: the record is given up, and
    stays in the reference marked with that election (broker 1, leader epoch 2).  It counts as
    lost (CommittedRecordsSurvive and IsrHoldsCommittedRecords break), and the loss is a declared
    one (LossesDeclared holds)."""
    model, state = cluster(unclean_election="admin")
    state = with_partition(model, state, 0, (0,))
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    assert state[ACKED][0] == ((0, 0, 0, KEPT),)
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, state, "ControllerFencesExpiredBroker", 0)
    assert state[PARTITION][0][LEADER] == -1
    state = step(model, state, "AdminElectsUncleanLeader", 0)
    part = state[PARTITION][0]
    assert (part[LEADER], part[ISR], part[RECOVERING]) == (1, (1,), True)
    assert state[ACKED][0] == ((0, 0, 0, (LOST_BY_ELECTION, 1, 2)),)
    assert model.describe(state)["acked"] == [[
        {"offset": 0, "leaderEpoch": 0, "leader": 0, "lostBy": {"election": {"leader": 1, "leaderEpoch": 2}}}]]
    broken = sorted(name for name, holds in model.invariants.items() if not holds(state))
    assert broken == ["CommittedRecordsSurvive", "IsrHoldsCommittedRecords"]
    # the picture names the election that lost it
    assert "acknowledged: 0 (e0) " in model.picture(model.describe(state))
    assert "lost: b1 elected unclean in e2" in model.picture(model.describe(state))
    disk = model._with(state, acked=((((0, 0, 0, (LOST_BY_DISK, 0, 3)),)),))
    assert "lost: b0's disk replaced" in model.picture(model.describe(disk))


def test_alter_partition_refuses_a_recovering_isr_of_two_and_a_return_to_recovering():
    """validateAlterPartitionData: RECOVERING with more than one member, and RECOVERED going back
    to RECOVERING, are INVALID_REQUEST."""
    model, state = cluster(unclean_election="admin")
    _, error = alter_partition(model, with_partition(model, state, 0, (0, 1), recovering=True), (0, 1), recovering=True)
    assert error == "INVALID_REQUEST"
    _, error = alter_partition(model, state, (0,), recovering=True)
    assert error == "INVALID_REQUEST"


def test_the_leaders_alter_partition_reports_its_recovery():
    """The leader of an unclean election marks itself RECOVERED on taking the lead (makeLeader);
    its AlterPartition carries that, and the record clears RECOVERING."""
    model, state = cluster(unclean_election="admin")
    state = with_partition(model, state, 0, (0,), recovering=True)
    state, error = alter_partition(model, state, (0, 1))
    assert error == "NONE"
    assert (state[PARTITION][0][ISR], state[PARTITION][0][RECOVERING]) == ((0, 1), False)


def test_the_high_watermark_stays_under_min_isr():
    """KAFKA-15583: with ISR [0] under min ISR 2, broker 1's fetch of a record written while the
    ISR was [0, 1] moves no high watermark."""
    model, state = cluster(**ELR_ON)
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    state, error = alter_partition(model, state, (0,))
    assert error == "NONE" and state[PARTITION][0][ELR] == (1,)
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    state = step(model, state, "FollowerFetches", 1, 0)
    assert state[HIGH_WATERMARK] == ((0,), (0,)) and state[ACKED][0] == ()
    assert state[PARTITION][0][LAST_KNOWN_ELR] == ()


def test_the_picture_shows_the_elr_the_last_known_leader_and_recovering():
    model, state = cluster(**ELR_ON)
    state = with_partition(model, state, 0, (0,), elr=(1,), known=(1,), recovering=True)
    drawn = model.picture(model.describe(state))
    assert "ISR {b0}" in drawn and "ELR {b1}" in drawn and "last known leader b1" in drawn
    assert "RECOVERING" in drawn


# -------------------------------------------------------------------------------------------
# The leader-epoch bump on an ISR shrink below metadata version 3.6-IV0 (KAFKA-15021)
# -------------------------------------------------------------------------------------------
def test_below_3_6_iv0_an_isr_shrink_bumps_the_leader_epoch():
    """testTriggerLeaderEpochBumpIfNeeded: a shrink sets the record's leader to the current one
    (the epoch goes up on replay), an expansion does not; at 3.6-IV0 and later a shrink keeps it
    (testNoLeaderEpochBumpOnIsrShrink)."""
    model, state = cluster(metadata_version="3.5-IV2")
    shrink = model.partition_change_record(state, 0, target_isr=(0,))
    assert shrink == (PARTITION_CHANGE, 0, 0, (0,), None, None, None, None, None, None, None)
    assert model.merged(state[PARTITION][0], shrink)[LEADER_EPOCH] == state[PARTITION][0][LEADER_EPOCH] + 1
    shrunk = with_partition(model, state, 0, (0,))
    assert model.partition_change_record(shrunk, 0, target_isr=(0, 1)) == (
        PARTITION_CHANGE, 0, NO_LEADER_CHANGE, (0, 1), None, None, None, None, None, None, None)
    for version in ("3.6-IV2", "3.7-IV2"):
        model, state = cluster(metadata_version=version)
        assert model.partition_change_record(state, 0, target_isr=(0,)) == (
            PARTITION_CHANGE, 0, NO_LEADER_CHANGE, (0,), None, None, None, None, None, None, None)


def test_below_3_6_iv0_the_leaders_alter_partition_shrink_bumps_the_leader_epoch():
    model, state = cluster(metadata_version="3.5-IV2")
    before = state[PARTITION][0]
    state, error = alter_partition(model, state, (0,))
    assert error == "NONE"
    assert state[PARTITION][0][:2] == (0, (0,))
    assert state[PARTITION][0][LEADER_EPOCH] == before[LEADER_EPOCH] + 1
    assert state[PARTITION][0][PARTITION_EPOCH] == before[PARTITION_EPOCH] + 1
    mutated, state = cluster(metadata_version="3.5-IV2", mutant="no_leader_epoch_bump_on_isr_shrink")
    state, error = alter_partition(mutated, state, (0,))
    assert (error, state[PARTITION][0][LEADER_EPOCH]) == ("NONE", before[LEADER_EPOCH])
