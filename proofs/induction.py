"""Induction over the controller's actions: Init ⇒ Inv, and Inv ∧ Action ⇒ Inv′ one action at a
time, over full-width values (128-bit directory IDs, 64-bit broker epochs) for ``n`` brokers and
one partition whose replicas are all of them.

The state is the controller's (:class:`ControllerState`): every broker's registration and the
partition, which may not exist yet.  The actions are the controller's handlers under the code's
semantics (``semantics = "code"``, the records computed from the image the request found, then
merged in order as replay merges them), the administrator's designated election and partition
creation; what brokers do is left free, so each handler's request may carry any value its
message can.  An invariant is checked inductively relative to all of them together with the
helper lemmas (what registration and the controller's metadata always satisfy), and the helpers
are checked in the same way, so that a table of "proven" cells is a proof.

A cell that is not proven has a counterexample to induction: a pre-state satisfying every
invariant and helper, and a step of the action to a state that breaks one, printed in Kafka's
terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import z3

from . import rules
from .lemmas import uuid_text
from .rules import EPOCH_BITS, NO_LEADER, UUID_BITS, Partition, Registration


class ControllerState:
    """Fresh variables for one controller state, their names marked with ``tag``."""

    def __init__(self, n: int, dirs: int, tag: str):
        self.n, self.tag = n, tag
        self.registrations = [
            Registration(z3.BitVec(f"epoch_b{b}{tag}", EPOCH_BITS), z3.Bool(f"fenced_b{b}{tag}"),
                         [(z3.Bool(f"dir{i}_listed_b{b}{tag}"), z3.BitVec(f"dir{i}_b{b}{tag}", UUID_BITS))
                          for i in range(dirs)])
            for b in range(n)]
        self.created = z3.Bool(f"created{tag}")
        self.partition = Partition(z3.Int(f"leader{tag}"), [z3.Bool(f"isr_b{b}{tag}") for b in range(n)],
                                   [z3.BitVec(f"replica_dir_b{b}{tag}", UUID_BITS) for b in range(n)])

    def same_registration(self, other: "ControllerState", b: int) -> z3.BoolRef:
        mine, theirs = self.registrations[b], other.registrations[b]
        return z3.And(mine.epoch == theirs.epoch, mine.fenced == theirs.fenced,
                      *[z3.And(p == q, u == v) for (p, u), (q, v) in zip(mine.dirs, theirs.dirs)])

    def same_partition(self, other: "ControllerState") -> z3.BoolRef:
        p, q = self.partition, other.partition
        return z3.And(self.created == other.created, p.leader == q.leader,
                      *[a == b for a, b in zip(p.isr, q.isr)], *[a == b for a, b in zip(p.dirs, q.dirs)])

    def describe(self, model: z3.ModelRef) -> list[str]:
        def value(term):
            return model.eval(term, model_completion=True)

        lines = []
        for b, r in enumerate(self.registrations):
            epoch = value(r.epoch).as_signed_long()
            listed = [uuid_text(value(u)) for q, u in r.dirs if z3.is_true(value(q))]
            state = f"registered, broker epoch {epoch}" if epoch > 0 else "not registered"
            fenced = "fenced" if z3.is_true(value(r.fenced)) else "unfenced"
            lines.append(f"broker {b}: {state}, {fenced}, online dirs [{', '.join(listed)}]")
        if not z3.is_true(value(self.created)):
            return lines + ["partition: not created"]
        p = self.partition
        leader = value(p.leader).as_long()
        isr = [b for b in range(self.n) if z3.is_true(value(p.isr[b]))]
        replica_dirs = ", ".join(f"b{b}: {uuid_text(value(d))}" for b, d in enumerate(p.dirs))
        lines.append(f"partition: leader {leader if leader != NO_LEADER else 'none'}, isr {isr}, "
                     f"replica dirs {{{replica_dirs}}}")
        return lines


# ---------------------------------------------------------------------------------------------
# Invariants (model/invariants.py) and the helper lemmas the induction needs
# ---------------------------------------------------------------------------------------------
def leader_is(s: ControllerState, b: int) -> z3.BoolRef:
    return z3.And(s.created, s.partition.leader == b)


def _leader_on_online_dir(s: ControllerState, mutant: str) -> z3.BoolRef:
    return z3.And([z3.Implies(leader_is(s, b), z3.And(s.registrations[b].registered(),
                                                     rules.is_online(s.partition.dirs[b], s.registrations[b])))
                   for b in range(s.n)])


def _fenced_broker_leads_nothing(s: ControllerState, mutant: str) -> z3.BoolRef:
    return z3.And([z3.Implies(leader_is(s, b), z3.And(s.registrations[b].registered(),
                                                     z3.Not(s.registrations[b].fenced)))
                   for b in range(s.n)])


def _leader_in_isr(s: ControllerState, mutant: str) -> z3.BoolRef:
    return z3.Implies(s.created, z3.Or(s.partition.leader == NO_LEADER,
                                       z3.Or([z3.And(s.partition.leader == b, s.partition.isr[b])
                                              for b in range(s.n)])))


def _isr_not_empty(s: ControllerState, mutant: str) -> z3.BoolRef:
    return z3.And(s.partition.leader >= NO_LEADER, s.partition.leader < s.n,
                  z3.Implies(s.created, z3.Or(s.partition.isr)))


def _registrations_valid(s: ControllerState, mutant: str) -> z3.BoolRef:
    """No directory in two registration slots, one broker's or two brokers'; none reserved
    (registration_valid accepted each); epochs not negative."""
    listed = [(q, u) for r in s.registrations for q, u in r.dirs]
    distinct = [z3.Not(z3.And(q1, q2, u1 == u2)) for i, (q1, u1) in enumerate(listed) for q2, u2 in listed[i + 1:]]
    real = [] if mutant == "reserved_uuids" else [z3.Not(z3.And(q, rules.reserved(u))) for q, u in listed]
    return z3.And(*distinct, *real, *[r.epoch >= 0 for r in s.registrations])


def _replica_dirs_well_formed(s: ControllerState, mutant: str) -> z3.BoolRef:
    """A created partition's replica directories are markers or real UUIDs (ReservedUUIDsNeverReal)."""
    return z3.Implies(s.created, z3.And([
        z3.Or(d == rules.UNASSIGNED, d == rules.LOST, d == rules.MIGRATING, z3.Not(rules.reserved(d)))
        for d in s.partition.dirs]))


@dataclass(frozen=True)
class Property:
    name: str
    holds: Callable[[ControllerState, str], z3.BoolRef]
    #: a helper lemma rather than one of the model's invariants
    helper: bool = False


PROPERTIES = (
    Property("LeaderOnOnlineDir", _leader_on_online_dir),
    Property("FencedBrokerLeadsNothing", _fenced_broker_leads_nothing),
    Property("LeaderInIsr", _leader_in_isr),
    Property("IsrNotEmpty", _isr_not_empty, helper=True),
    Property("RegistrationsValid", _registrations_valid, helper=True),
    Property("ReplicaDirsWellFormed", _replica_dirs_well_formed, helper=True),
)


def initial(s: ControllerState) -> z3.BoolRef:
    """Init: nothing registered (epoch 0, fenced, no directory), no partition."""
    return z3.And(z3.Not(s.created), s.partition.leader == NO_LEADER,
                  *[z3.And(r.epoch == 0, r.fenced, *[z3.Not(q) for q, _ in r.dirs]) for r in s.registrations])


# ---------------------------------------------------------------------------------------------
# The controller's actions, semantics "code"
# ---------------------------------------------------------------------------------------------
def _merge(pre: Partition, elected, record_isr, current_leader, current_isr):
    """A PartitionChangeRecord computed from ``pre`` and merged onto (current_leader,
    current_isr): it sets the leader only if the election changed it from the image's, and the
    ISR only if it changed (PartitionChangeBuilder.build; PartitionRegistration.merge)."""
    leader_changed = elected != pre.leader
    isr_changed = z3.Or([a != b for a, b in zip(record_isr, pre.isr)])
    return (z3.If(leader_changed, elected, current_leader),
            [z3.If(isr_changed, a, c) for a, c in zip(record_isr, current_isr)])


def _others_unchanged(pre, post, b) -> z3.BoolRef:
    return z3.And([pre.same_registration(post, o) for o in range(pre.n) if o != b])


def fences_expired_broker(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerFencesExpiredBroker (handleBrokerFenced): the broker out of the ISR and
    leadership when in the ISR, then the registration change that fences it."""
    r, r2 = pre.registrations[b], post.registrations[b]
    leader = rules.fence(pre.partition, pre.registrations, b, mutant)
    _, isr = rules.elect(pre.partition, pre.registrations, mutant, remove=b)
    in_isr = z3.And(pre.created, pre.partition.isr[b])
    kept = mutant == "fenced_leader_kept"
    return z3.And(
        r.registered(), z3.Not(r.fenced),
        r2.epoch == r.epoch, r2.fenced, *[z3.And(p == q, u == v) for (p, u), (q, v) in zip(r.dirs, r2.dirs)],
        _others_unchanged(pre, post, b),
        post.created == pre.created, *[a == c for a, c in zip(pre.partition.dirs, post.partition.dirs)],
        post.partition.leader == z3.If(in_isr, leader, pre.partition.leader),
        *[post.partition.isr[o] == (pre.partition.isr[o] if kept else z3.If(in_isr, isr[o], pre.partition.isr[o]))
          for o in range(pre.n)])


def handles_heartbeat(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesHeartbeat with the broker's current epoch (a stale one changes nothing),
    any subset of its registered directories reported offline, and wantFence either way: the
    unfencing first (handleBrokerUnfenced: the registration change, then an election with the
    sender as brokerToAdd), then handleDirectoriesOffline (the sender as brokerToRemove from a
    partition with its replica in a newly offline directory, then the remaining directories),
    every record computed from the image the heartbeat found, replayed in that order."""
    r, r2 = pre.registrations[b], post.registrations[b]
    part = pre.partition
    want_fence = z3.Bool(f"want_fence_b{b}{post.tag}")
    offline = [z3.Bool(f"reports_dir{i}_offline_b{b}{post.tag}") for i in range(len(r.dirs))]
    newly = [z3.And(q, o) for (q, _), o in zip(r.dirs, offline)]
    unfence = z3.And(r.fenced, z3.Not(want_fence))
    # the election handleBrokerUnfenced writes for a leaderless partition, from the image
    elected, elected_isr = rules.elect(part, pre.registrations, mutant, add=b)
    elects = z3.And(unfence, pre.created, part.leader == NO_LEADER, mutant != "unfence_without_election")
    leader1, isr1 = _merge(part, z3.If(elects, elected, part.leader), elected_isr, part.leader, part.isr)
    # handleDirectoriesOffline's record, from the same image
    affected = z3.And(pre.created, z3.Or([z3.And(n_i, u == part.dirs[b]) for n_i, (_, u) in zip(newly, r.dirs)]))
    removed, removed_isr = rules.elect(part, pre.registrations, mutant, remove=b,
                                       keep_in_isr=mutant == "keep_offline_replica_in_isr")
    leader2, isr2 = _merge(part, z3.If(affected, removed, part.leader),
                           [z3.If(affected, a, c) for a, c in zip(removed_isr, part.isr)], leader1, isr1)
    # the registration's remaining directories; an empty logDirs is replayed as "no change"
    remaining = [z3.And(q, z3.Not(n_i)) for (q, _), n_i in zip(r.dirs, newly)]
    emptied = z3.Not(z3.Or(remaining)) if remaining else z3.BoolVal(True)
    return z3.And(
        r.registered(), z3.Or(offline + [r.fenced]),
        r2.epoch == r.epoch, r2.fenced == z3.And(r.fenced, z3.Not(unfence)),
        *[z3.And(q2 == z3.If(emptied, q, rem), u2 == u) for (q, u), (q2, u2), rem in zip(r.dirs, r2.dirs, remaining)],
        _others_unchanged(pre, post, b),
        post.created == pre.created, *[a == c for a, c in zip(part.dirs, post.partition.dirs)],
        post.partition.leader == leader2, *[a == c for a, c in zip(post.partition.isr, isr2)])


def registers_new_incarnation(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesRegistration and ControllerHandlesRegistrationAfterSessionTimeout for a
    new incarnation (registerBroker): accepted when the registered one's session is not valid
    (fenced, never registered, or its timeout elapsed: any); a greater epoch, fenced, the
    directories it brings (valid); ISR memberships and leaderships kept (no ELR)."""
    r, r2 = pre.registrations[b], post.registrations[b]
    return z3.And(
        r2.epoch > r.epoch, r2.fenced,
        rules.registration_valid(r2.dirs, False, [pre.registrations[o] for o in range(pre.n) if o != b], mutant),
        _others_unchanged(pre, post, b), pre.same_partition(post))


def elects_designated_leader(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """AdminElectsDesignatedLeader (KIP-1275): the leader b and the ISR just b."""
    return z3.And(
        pre.created, rules.designated_accepted(pre.partition, pre.registrations, b, mutant),
        *[pre.same_registration(post, o) for o in range(pre.n)],
        post.created, post.partition.leader == b,
        *[post.partition.isr[o] == (o == b) for o in range(pre.n)],
        *[a == c for a, c in zip(pre.partition.dirs, post.partition.dirs)])


def creates_partition(pre: ControllerState, post: ControllerState, mutant: str) -> z3.BoolRef:
    """ControllerCreatesPartition: every replica registered, the ISR its unfenced replicas (at
    least one), the first of them leader, each directory defaultDir (3.7-IV2: the single
    registered directory, else UNASSIGNED; MIGRATING without directories)."""
    regs = pre.registrations
    unfenced = [z3.Not(r.fenced) for r in regs]
    first = z3.IntVal(NO_LEADER)
    for o in reversed(range(pre.n)):
        first = z3.If(unfenced[o], z3.IntVal(o), first)

    def default_dir(r: Registration):
        count = z3.Sum([z3.If(q, 1, 0) for q, _ in r.dirs])
        single = rules.UNASSIGNED
        for q, u in reversed(r.dirs):
            single = z3.If(q, u, single)
        return z3.If(count == 0, rules.MIGRATING, z3.If(count == 1, single, rules.UNASSIGNED))

    return z3.And(
        z3.Not(pre.created), *[r.registered() for r in regs], z3.Or(unfenced),
        *[pre.same_registration(post, o) for o in range(pre.n)],
        post.created, post.partition.leader == first,
        *[post.partition.isr[o] == unfenced[o] for o in range(pre.n)],
        *[post.partition.dirs[o] == default_dir(regs[o]) for o in range(pre.n)])


def _assigned(pre: ControllerState, post: ControllerState, b: int, mutant: str):
    """The directory an AssignReplicasToDirs request names for broker b's replica, the
    partition's directories with it, and what a broker can send: one of its directories (a real
    UUID, the format tool's; any value under reserved_uuids) or LOST."""
    directory = z3.BitVec(f"assigned_dir_b{b}{post.tag}", UUID_BITS)
    dirs = [directory if r == b else d for r, d in enumerate(pre.partition.dirs)]
    sendable = z3.BoolVal(True) if mutant == "reserved_uuids" else z3.Or(directory == rules.LOST,
                                                                           z3.Not(rules.reserved(directory)))
    return directory, dirs, sendable


def handles_assignment(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesAssignment with the broker's current epoch (handleAssignReplicasToDirs):
    a record setting the directory, its election judging replicas on the directories the
    partition had, then, for a directory not online, a second record from the same image taking
    the broker out; replayed in that order."""
    part = pre.partition
    directory, dirs, sendable = _assigned(pre, post, b, mutant)
    online = rules.controller_thinks_online(directory, pre.registrations[b], mutant)
    elected, elected_isr = rules.elect(part, pre.registrations, mutant)
    leader1, isr1 = _merge(part, elected, elected_isr, part.leader, part.isr)
    removed, removed_isr = rules.elect(part, pre.registrations, mutant, remove=b)
    leader2, isr2 = _merge(part, z3.If(online, part.leader, removed),
                           [z3.If(online, c, a) for a, c in zip(removed_isr, part.isr)], leader1, isr1)
    return z3.And(pre.registrations[b].registered(), pre.created, sendable,
                  *[pre.same_registration(post, o) for o in range(pre.n)],
                  _partition_is(post, pre.created, leader2, isr2, dirs))


def handles_alter_replica_state(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesAlterReplicaState with the broker's current epoch (KIP-589): the
    replica's directory becomes LOST, and it leaves the ISR and leadership."""
    part = pre.partition
    dirs = [rules.LOST if r == b else d for r, d in enumerate(part.dirs)]
    leader, isr = rules.elect(Partition(part.leader, part.isr, dirs), pre.registrations, mutant, remove=b)
    return z3.And(pre.registrations[b].registered(), pre.created,
                  *[pre.same_registration(post, o) for o in range(pre.n)],
                  _partition_is(post, pre.created, leader, isr, dirs))


# ---------------------------------------------------------------------------------------------
# The same handlers under the KIP's reading (semantics "kip"): each change applied after the last
# ---------------------------------------------------------------------------------------------
def _with_registration(regs: list[Registration], b: int, **changes) -> list[Registration]:
    r = regs[b]
    changed = Registration(changes.get("epoch", r.epoch), changes.get("fenced", r.fenced), changes.get("dirs", r.dirs))
    return regs[:b] + [changed] + regs[b + 1:]


def _registration_is(r2: Registration, r: Registration) -> z3.BoolRef:
    return z3.And(r2.epoch == r.epoch, r2.fenced == r.fenced,
                  *[z3.And(p == q, u == v) for (p, u), (q, v) in zip(r.dirs, r2.dirs)])


def _partition_is(post: ControllerState, created, leader, isr, dirs) -> z3.BoolRef:
    return z3.And(post.created == created, post.partition.leader == leader,
                  *[a == c for a, c in zip(post.partition.isr, isr)],
                  *[a == c for a, c in zip(post.partition.dirs, dirs)])


def fences_expired_broker_kip(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerFencesExpiredBroker, the KIP's reading: the broker fenced, then taken out of
    every partition it is a replica of, each election seeing it fenced."""
    r = pre.registrations[b]
    regs = _with_registration(pre.registrations, b, fenced=z3.BoolVal(True))
    part = pre.partition
    if mutant == "fenced_leader_kept":
        leader, isr = part.leader, part.isr
    else:
        elected, elected_isr = rules.elect(part, regs, mutant, remove=b)
        leader = z3.If(pre.created, elected, part.leader)
        isr = [z3.If(pre.created, a, c) for a, c in zip(elected_isr, part.isr)]
    return z3.And(r.registered(), z3.Not(r.fenced), _registration_is(post.registrations[b], regs[b]),
                  _others_unchanged(pre, post, b), _partition_is(post, pre.created, leader, isr, part.dirs))


def handles_heartbeat_kip(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesHeartbeat, the KIP's reading: the newly offline directories leave the
    registration and take the sender out of the partition with its replica there, judged on the
    registration without them; then a fenced sender that wants it, and has no replica
    UNASSIGNED, is unfenced, and a leaderless partition elects, seeing all of that."""
    r = pre.registrations[b]
    part = pre.partition
    want_fence = z3.Bool(f"want_fence_b{b}{post.tag}")
    offline = [z3.Bool(f"reports_dir{i}_offline_b{b}{post.tag}") for i in range(len(r.dirs))]
    newly = [z3.And(q, o) for (q, _), o in zip(r.dirs, offline)]
    regs1 = _with_registration(pre.registrations, b, dirs=[(z3.And(q, z3.Not(n_i)), u)
                                                           for (q, u), n_i in zip(r.dirs, newly)])
    affected = z3.And(pre.created, z3.Or([z3.And(n_i, u == part.dirs[b]) for n_i, (_, u) in zip(newly, r.dirs)]))
    removed, removed_isr = rules.elect(part, regs1, mutant, remove=b, keep_in_isr=mutant == "keep_offline_replica_in_isr")
    leader1 = z3.If(affected, removed, part.leader)
    isr1 = [z3.If(affected, a, c) for a, c in zip(removed_isr, part.isr)]
    part1 = Partition(leader1, isr1, part.dirs)
    listed = z3.Or([q for q, _ in regs1[b].dirs]) if regs1[b].dirs else z3.BoolVal(False)
    waits = z3.And(listed, pre.created, part.dirs[b] == rules.UNASSIGNED)
    unfence = z3.And(r.fenced, z3.Not(want_fence),
                     z3.BoolVal(True) if mutant == "unfence_before_assigned" else z3.Not(waits))
    elected, elected_isr = rules.elect(part1, regs1, mutant, add=b)
    elects = z3.And(unfence, pre.created, leader1 == NO_LEADER, mutant != "unfence_without_election")
    leader2 = z3.If(elects, elected, leader1)
    isr2 = [z3.If(elects, a, c) for a, c in zip(elected_isr, isr1)]
    regs2 = _with_registration(regs1, b, fenced=z3.And(r.fenced, z3.Not(unfence)))
    return z3.And(r.registered(), z3.Or(offline + [r.fenced]), _registration_is(post.registrations[b], regs2[b]),
                  _others_unchanged(pre, post, b), _partition_is(post, pre.created, leader2, isr2, part.dirs))


def registers_new_incarnation_kip(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesRegistration of a newer incarnation, the KIP's reading: registered
    fenced with the directories it brings, then out of every partition it is a replica of
    (unclean shutdown), each election seeing the new registration."""
    r2 = post.registrations[b]
    regs = pre.registrations[:b] + [r2] + pre.registrations[b + 1:]
    part = pre.partition
    elected, elected_isr = rules.elect(part, regs, mutant, remove=b)
    leader = z3.If(pre.created, elected, part.leader)
    isr = [z3.If(pre.created, a, c) for a, c in zip(elected_isr, part.isr)]
    return z3.And(
        r2.epoch > pre.registrations[b].epoch, r2.fenced,
        rules.registration_valid(r2.dirs, False, [pre.registrations[o] for o in range(pre.n) if o != b], mutant),
        _others_unchanged(pre, post, b), _partition_is(post, pre.created, leader, isr, part.dirs))


def handles_assignment_kip(pre: ControllerState, post: ControllerState, b: int, mutant: str) -> z3.BoolRef:
    """ControllerHandlesAssignment, the KIP's reading: one change records the directory and,
    for a directory not online, takes the broker out, judged on the new directories."""
    part = pre.partition
    directory, dirs, sendable = _assigned(pre, post, b, mutant)
    online = rules.controller_thinks_online(directory, pre.registrations[b], mutant)
    moved = Partition(part.leader, part.isr, dirs)
    kept, kept_isr = rules.elect(moved, pre.registrations, mutant)
    removed, removed_isr = rules.elect(moved, pre.registrations, mutant, remove=b)
    return z3.And(pre.registrations[b].registered(), pre.created, sendable,
                  *[pre.same_registration(post, o) for o in range(pre.n)],
                  _partition_is(post, pre.created, z3.If(online, kept, removed),
                                [z3.If(online, k, r) for k, r in zip(kept_isr, removed_isr)], dirs))


@dataclass(frozen=True)
class Action:
    name: str
    #: (pre, post, broker or None, mutant) -> the step relation
    step: Callable
    per_broker: bool = True
    #: the model's actions this relation encodes (the step relation takes exactly their steps
    #: that change the controller's variables; tests/test_prove_differential.py)
    model_actions: tuple[str, ...] = ()


_SHARED = (
    Action("ControllerHandlesAlterReplicaState", handles_alter_replica_state,
           model_actions=("ControllerHandlesAlterReplicaState",)),
    Action("AdminElectsDesignatedLeader", elects_designated_leader, model_actions=("AdminElectsDesignatedLeader",)),
    Action("ControllerCreatesPartition", lambda pre, post, _b, mutant: creates_partition(pre, post, mutant),
           per_broker=False, model_actions=("ControllerCreatesPartition",)),
)
#: semantics -> the encoded actions
ACTIONS_BY_SEMANTICS = {
    "code": (
        Action("ControllerFencesExpiredBroker", fences_expired_broker,
               model_actions=("ControllerFencesExpiredBroker", "ControllerFencesSilentBroker")),
        Action("ControllerHandlesHeartbeat", handles_heartbeat, model_actions=("ControllerHandlesHeartbeat",)),
        Action("ControllerHandlesRegistration", registers_new_incarnation,
               model_actions=("ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout")),
        Action("ControllerHandlesAssignment", handles_assignment, model_actions=("ControllerHandlesAssignment",)),
    ) + _SHARED,
    "kip": (
        Action("ControllerFencesExpiredBroker", fences_expired_broker_kip,
               model_actions=("ControllerFencesExpiredBroker", "ControllerFencesSilentBroker")),
        Action("ControllerHandlesHeartbeat", handles_heartbeat_kip, model_actions=("ControllerHandlesHeartbeat",)),
        Action("ControllerHandlesRegistration", registers_new_incarnation_kip,
               model_actions=("ControllerHandlesRegistration",)),
        Action("ControllerHandlesAssignment", handles_assignment_kip, model_actions=("ControllerHandlesAssignment",)),
    ) + _SHARED,
}
ACTIONS = ACTIONS_BY_SEMANTICS["code"]


@dataclass
class Cell:
    """One action (or Init) against one property."""

    action: str
    prop: str
    helper: bool
    #: "proven", "counterexample" or "incomplete"
    result: str
    seconds: float
    pre: list[str]
    post: list[str]
    reason: str = ""
    #: for a counterexample: (a model of the Kafka model) -> its pre- and post-state as that
    #: model's states, the controller's variables from the solver, the brokers' from Init
    states: Callable | None = None
    #: for a counterexample: where a run reaches it (proofs/reach.py), once looked up
    reached: object = None


def check_induction(n: int, dirs: int, mutant: str = "none", timeout_s: float = 60.0,
                    semantics: str = "code") -> list[Cell]:
    """Every property: Init ⇒ it, and the conjunction of all of them ∧ each action ⇒ it after
    the step, the action's broker being broker 0 (the brokers are symmetric)."""
    cells = []
    for prop in PROPERTIES:
        s = ControllerState(n, dirs, "")
        cells.append(_solve("Init", prop, [initial(s), z3.Not(prop.holds(s, mutant))], s, None, timeout_s))
    for action in ACTIONS_BY_SEMANTICS[semantics]:
        for prop in PROPERTIES:
            pre, post = ControllerState(n, dirs, ""), ControllerState(n, dirs, "'")
            hypothesis = [p.holds(pre, mutant) for p in PROPERTIES]
            step = action.step(pre, post, 0 if action.per_broker else None, mutant)
            cells.append(_solve(action.name, prop, [*hypothesis, step, z3.Not(prop.holds(post, mutant))],
                                pre, post, timeout_s))
    return cells


def _solve(action: str, prop: Property, claims, pre: ControllerState, post, timeout_s: float) -> Cell:
    import time

    solver = z3.Solver()
    solver.set("timeout", int(timeout_s * 1000))
    solver.add(*claims)
    start = time.perf_counter()
    answer = solver.check()
    seconds = time.perf_counter() - start
    if answer == z3.unsat:
        return Cell(action, prop.name, prop.helper, "proven", seconds, [], [])
    if answer == z3.sat:
        model = solver.model()

        def states(kafka_model):
            from .concrete import Renaming, image_of

            init = next(iter(kafka_model.init_states()))
            rename, partitions = Renaming(), len(kafka_model.partitions)
            before = image_of(pre, model, rename, (0,) * pre.n, partitions)
            images = [before] + ([] if post is None else [
                image_of(post, model, rename, (0,) * pre.n, partitions, before[3][0])])
            return tuple(kafka_model.with_controller_image(init, image) for image in images)

        return Cell(action, prop.name, prop.helper, "counterexample", seconds, pre.describe(model),
                    post.describe(model) if post is not None else [], states=states)
    return Cell(action, prop.name, prop.helper, "incomplete", seconds, [], [], solver.reason_unknown())
