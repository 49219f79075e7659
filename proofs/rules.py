"""The controller's decision rules as z3 terms, over full-width values.

A directory ID is a 128-bit bit-vector (Kafka's ``Uuid``: most significant 64 bits, then least
significant), a broker epoch a signed 64-bit one.  A cluster has ``n`` brokers, each with its
registration (epoch, fenced, up to ``dirs`` online directories), and one partition whose
replicas are the ``n`` brokers in id order (any replica order is a renaming of the brokers),
with its leader, ISR and each replica's directory.

Each function mirrors the Python rule named in its docstring, mutants included, so that the
lemmas in :mod:`.lemmas` speak of the rules the model checks; ``tests/test_prove.py`` holds the
terms to the Python functions on drawn inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

UUID_BITS = 128
EPOCH_BITS = 64
NO_LEADER = -1

#: DirectoryId's markers, as Kafka's Uuid(0, n).
UNASSIGNED = z3.BitVecVal(0, UUID_BITS)
LOST = z3.BitVecVal(1, UUID_BITS)
MIGRATING = z3.BitVecVal(2, UUID_BITS)
MARKER_NAMES = {0: "UNASSIGNED", 1: "LOST", 2: "MIGRATING"}


def reserved(uuid) -> z3.BoolRef:
    """DirectoryId.reserved: the most significant 64 bits zero and the least significant < 100."""
    return z3.And(z3.Extract(127, 64, uuid) == 0, z3.ULT(z3.Extract(63, 0, uuid), 100))


@dataclass
class Registration:
    """A broker's registration as the controller holds it."""

    epoch: z3.BitVecRef
    fenced: z3.BoolRef
    #: the online directories: ``(present, uuid)`` per slot of the registration
    dirs: list[tuple[z3.BoolRef, z3.BitVecRef]]

    def registered(self) -> z3.BoolRef:
        return self.epoch > 0


def is_online(directory, registration: Registration) -> z3.BoolRef:
    """DirectoryId.isOnline (model/uuids.py ``is_online``): UNASSIGNED and MIGRATING count as
    online, LOST never, and a registration without directories has every directory online."""
    none = z3.Not(z3.Or([present for present, _ in registration.dirs])) if registration.dirs else z3.BoolVal(True)
    listed = z3.Or([z3.And(present, uuid == directory) for present, uuid in registration.dirs]) \
        if registration.dirs else z3.BoolVal(False)
    return z3.If(z3.Or(directory == UNASSIGNED, directory == MIGRATING), True,
                 z3.If(directory == LOST, False, z3.If(none, True, listed)))


def controller_thinks_online(directory, registration: Registration, mutant: str) -> z3.BoolRef:
    """``Operators._controller_thinks_online``: the controller's own check, where the directory
    mutants put their bugs back."""
    if mutant == "elect_ignoring_dirs":
        return z3.BoolVal(True)
    if mutant == "no_dirs_all_offline":
        none = z3.Not(z3.Or([present for present, _ in registration.dirs])) if registration.dirs else z3.BoolVal(True)
        return z3.If(none, z3.Or(directory == UNASSIGNED, directory == MIGRATING), is_online(directory, registration))
    return is_online(directory, registration)


def acceptable_leader(directory, registration: Registration, mutant: str) -> z3.BoolRef:
    """``Operators.acceptable_leader`` (PartitionChangeBuilder's isAcceptableLeader): registered,
    unfenced, and its directory online as the controller judges it."""
    return z3.And(registration.registered(), z3.Not(registration.fenced),
                  controller_thinks_online(directory, registration, mutant))


def truly_acceptable(directory, registration: Registration) -> z3.BoolRef:
    """What an acceptable leader is meant to be: registered, unfenced, on a directory online in
    its registration (DirectoryId.isOnline), whatever the controller's own check says."""
    return z3.And(registration.registered(), z3.Not(registration.fenced), is_online(directory, registration))


@dataclass
class Partition:
    """One partition: replicas 0..n-1 in order, its leader (-1: none), ISR and directories."""

    leader: z3.ArithRef
    isr: list[z3.BoolRef]
    dirs: list[z3.BitVecRef]

    def well_formed(self) -> z3.BoolRef:
        """What the controller's metadata always satisfies (the model's invariants LeaderInIsr,
        IsrWithinReplicas): a non-empty ISR, the leader none or an ISR member."""
        n = len(self.isr)
        return z3.And(z3.Or(self.isr),
                      z3.Or(self.leader == NO_LEADER,
                            z3.Or([z3.And(self.leader == r, self.isr[r]) for r in range(n)])))


def member(flags: list[z3.BoolRef], index) -> z3.BoolRef:
    """``flags[index]`` for a symbolic index in range."""
    return z3.Or([z3.And(index == r, flag) for r, flag in enumerate(flags)])


def elect(partition: Partition, registrations: list[Registration], mutant: str, remove: int | None = None,
          add: int | None = None, keep_in_isr: bool = False) -> tuple[z3.ArithRef, list[z3.BoolRef]]:
    """``Records.partition_change_record``'s ISR and leader (PartitionChangeBuilder.build):
    ``remove`` leaves the ISR unless it is the last member (or ``keep_in_isr``) and is never an
    acceptable leader; ``add`` is acceptable though fenced; then the current leader stays if
    still in the ISR and acceptable, else the first acceptable ISR replica in replica order, else
    none.  ``remove`` and ``add`` are replica indices (Python ints) or None.  Returns the new
    leader and the new ISR."""
    n = len(partition.isr)
    isr = list(partition.isr)
    if remove is not None and not keep_in_isr:
        others = z3.Or([partition.isr[r] for r in range(n) if r != remove]) if n > 1 else z3.BoolVal(False)
        isr[remove] = z3.And(partition.isr[remove], z3.Not(others))

    def ok(r: int) -> z3.BoolRef:
        if r == remove:
            return z3.BoolVal(False)
        registration = registrations[r]
        if r == add:
            return z3.And(registration.registered(),
                          controller_thinks_online(partition.dirs[r], registration, mutant))
        return acceptable_leader(partition.dirs[r], registration, mutant)

    keep = z3.Or([z3.And(partition.leader == r, isr[r], ok(r)) for r in range(n)])
    first = z3.IntVal(NO_LEADER)
    for r in reversed(range(n)):
        first = z3.If(z3.And(isr[r], ok(r)), z3.IntVal(r), first)
    return z3.If(keep, partition.leader, first), isr



def epoch_gate(registration: Registration, epoch, mutant: str) -> z3.BoolRef:
    """The broker-epoch gate of heartbeats, AssignReplicasToDirs and AlterReplicaState
    (``ControllerHandlers.epoch_is_current``, KIP-589): the registered epoch exactly; under
    skip_epoch_check any epoch of a registered broker."""
    current = z3.And(registration.registered(), registration.epoch == epoch)
    if mutant == "skip_epoch_check":
        return z3.Or(current, registration.registered())
    return current


def registration_valid(dirs: list[tuple[z3.BoolRef, z3.BitVecRef]], legacy: bool,
                       others: list[Registration], mutant: str) -> z3.BoolRef:
    """``ControllerHandlers.registration_valid`` (ClusterControlManager): directories listed
    (none only for a broker of an older metadata version), no duplicate, no reserved one (unless
    reserved_uuids), none another broker registered."""
    present = [p for p, _ in dirs]
    conditions = []
    if not legacy:
        conditions.append(z3.Or(present))
    for i in range(len(dirs)):
        for j in range(i + 1, len(dirs)):
            conditions.append(z3.Not(z3.And(dirs[i][0], dirs[j][0], dirs[i][1] == dirs[j][1])))
    if mutant != "reserved_uuids":
        conditions += [z3.Not(z3.And(p, reserved(u))) for p, u in dirs]
    for other in others:
        for p, u in dirs:
            conditions += [z3.Not(z3.And(p, q, u == v)) for q, v in other.dirs]
    return z3.And(conditions) if conditions else z3.BoolVal(True)


def fence(partition: Partition, registrations: list[Registration], broker: int, mutant: str):
    """``ControllerHandlers._fence_records`` for one partition (handleBrokerFenced): the broker
    out of the ISR and leadership when it is in the ISR; nothing under fenced_leader_kept.
    Returns the new leader."""
    if mutant == "fenced_leader_kept":
        return partition.leader
    leader, _ = elect(partition, registrations, mutant, remove=broker)
    return z3.If(partition.isr[broker], leader, partition.leader)


def designated_accepted(partition: Partition, registrations: list[Registration], chosen: int, mutant: str):
    """``ControllerHandlers.AdminElectsDesignatedLeader``'s guard (KIP-1275): a leaderless
    partition (any, under designated_with_leader), not already led by the chosen replica, which
    must be acceptable."""
    leaderless = z3.BoolVal(True) if mutant == "designated_with_leader" else partition.leader == NO_LEADER
    return z3.And(leaderless, partition.leader != chosen,
                  acceptable_leader(partition.dirs[chosen], registrations[chosen], mutant))
