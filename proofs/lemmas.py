"""The lemmas ``kraftcheck prove`` proves: statements about the controller's rules (:mod:`.rules`)
for every value of every input, for a cluster of ``n`` brokers with up to ``dirs`` registered
directories each.

A lemma builds its claim over fresh variables (a :class:`Cluster`); z3 proves it when the
claim's negation is unsatisfiable, and otherwise its model is a counterexample, which
:meth:`Cluster.describe` says in Kafka's terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from . import rules
from .rules import EPOCH_BITS, NO_LEADER, UUID_BITS, Partition, Registration


class Cluster:
    """Fresh variables: every broker's registration, one partition, and what a lemma adds."""

    def __init__(self, n: int, dirs: int):
        self.n = n
        self.registrations = [
            Registration(z3.BitVec(f"epoch_b{b}", EPOCH_BITS), z3.Bool(f"fenced_b{b}"),
                         [(z3.Bool(f"dir{i}_listed_b{b}"), z3.BitVec(f"dir{i}_b{b}", UUID_BITS)) for i in range(dirs)])
            for b in range(n)]
        self.partition = Partition(z3.Int("leader"), [z3.Bool(f"isr_b{b}") for b in range(n)],
                                   [z3.BitVec(f"replica_dir_b{b}", UUID_BITS) for b in range(n)])
        #: what a lemma adds to the description of a counterexample: label -> term
        self.extra: dict[str, z3.ExprRef] = {}

    def well_formed(self, mutant: str) -> z3.BoolRef:
        """What the controller's state always satisfies: the leader none or a broker, the ISR and
        leader as the controller keeps them (LeaderInIsr, IsrWithinReplicas); registrations as
        registration_valid accepts them: no directory twice, in one broker's or in two brokers',
        and no reserved one (but under reserved_uuids); replicas' directories a marker or a real
        UUID (ReservedUUIDsNeverReal)."""
        p = self.partition
        listed = [(b, q, u) for b, r in enumerate(self.registrations) for q, u in r.dirs]
        distinct = [z3.Not(z3.And(q1, q2, u1 == u2))
                    for i, (_, q1, u1) in enumerate(listed) for (_, q2, u2) in listed[i + 1:]]
        real = [] if mutant == "reserved_uuids" else [z3.Not(z3.And(q, rules.reserved(u))) for _, q, u in listed]
        markers = [z3.Or(d == rules.UNASSIGNED, d == rules.LOST, d == rules.MIGRATING, z3.Not(rules.reserved(d)))
                   for d in p.dirs]
        return z3.And(p.leader >= NO_LEADER, p.leader < self.n, p.well_formed(), *distinct, *real, *markers)

    def describe(self, model: z3.ModelRef) -> list[str]:
        """The counterexample, in Kafka's terms."""
        lines = []
        for b, r in enumerate(self.registrations):
            epoch = model.eval(r.epoch, model_completion=True).as_signed_long()
            listed = [uuid_text(model.eval(u, model_completion=True)) for q, u in r.dirs
                      if z3.is_true(model.eval(q, model_completion=True))]
            state = "registered" if epoch > 0 else "not registered"
            fenced = "fenced" if z3.is_true(model.eval(r.fenced, model_completion=True)) else "unfenced"
            lines.append(f"broker {b}: {state}, broker epoch {epoch}, {fenced}, online dirs [{', '.join(listed)}]")
        p = self.partition
        leader = model.eval(p.leader, model_completion=True).as_long()
        isr = [b for b in range(self.n) if z3.is_true(model.eval(p.isr[b], model_completion=True))]
        replica_dirs = ", ".join(f"b{b}: {uuid_text(model.eval(d, model_completion=True))}" for b, d in enumerate(p.dirs))
        lines.append(f"partition: leader {leader if leader != NO_LEADER else 'none'}, isr {isr}, "
                     f"replica dirs {{{replica_dirs}}}")
        for label, term in self.extra.items():
            lines.append(f"{label}: {value_text(model.eval(term, model_completion=True))}")
        return lines


def uuid_text(value) -> str:
    """A 128-bit directory ID as Kafka prints a Uuid's parts, markers by name."""
    number = value.as_long()
    if number in rules.MARKER_NAMES:
        return rules.MARKER_NAMES[number]
    return f"Uuid(0x{number >> 64:016x}, 0x{number & (2 ** 64 - 1):016x})"


def value_text(value) -> str:
    if z3.is_bv_value(value):
        return uuid_text(value) if value.size() == UUID_BITS else str(value.as_signed_long())
    return str(value)


@dataclass(frozen=True)
class Lemma:
    name: str
    #: the statement, in Kafka's terms
    statement: str
    #: the claim over a fresh cluster, for a mutant ("none": the model as it is)
    claim: Callable[[Cluster, str], z3.BoolRef]
    #: the mutants that break a rule this lemma states (each must make it fail)
    broken_by: tuple[str, ...] = field(default=())


def _registration_rejects_reserved(c: Cluster, mutant: str) -> z3.BoolRef:
    request = [(z3.Bool(f"request_dir{i}_listed"), z3.BitVec(f"request_dir{i}", UUID_BITS))
               for i in range(len(c.registrations[0].dirs))]
    for i, (listed, uuid) in enumerate(request):
        c.extra[f"registration request dir {i}"] = z3.If(listed, uuid, rules.UNASSIGNED)
    valid = rules.registration_valid(request, False, c.registrations[1:], mutant)
    return z3.Implies(valid, z3.And([z3.Not(z3.And(listed, rules.reserved(uuid))) for listed, uuid in request]))


def _gate_exact(c: Cluster, mutant: str) -> z3.BoolRef:
    epoch = z3.BitVec("request_epoch", EPOCH_BITS)
    c.extra["request's broker epoch (for broker 0)"] = epoch
    r = c.registrations[0]
    return rules.epoch_gate(r, epoch, mutant) == z3.And(r.registered(), r.epoch == epoch)


def _elected_leader_acceptable(c: Cluster, mutant: str) -> z3.BoolRef:
    leader, isr = rules.elect(c.partition, c.registrations, mutant)
    c.extra["elected leader"] = leader
    return z3.Implies(leader != NO_LEADER, z3.Or([
        z3.And(leader == r, isr[r], rules.truly_acceptable(c.partition.dirs[r], c.registrations[r]))
        for r in range(c.n)]))


def _elected_when_possible(c: Cluster, mutant: str) -> z3.BoolRef:
    leader, isr = rules.elect(c.partition, c.registrations, mutant)
    c.extra["elected leader"] = leader
    someone = z3.Or([z3.And(isr[r], rules.truly_acceptable(c.partition.dirs[r], c.registrations[r]))
                     for r in range(c.n)])
    return z3.Implies(someone, leader != NO_LEADER)


def _failed_replica_leaves(c: Cluster, mutant: str) -> z3.BoolRef:
    """Broker 0's directory of the partition failed: handleDirectoriesOffline's record."""
    leader, isr = rules.elect(c.partition, c.registrations, mutant, remove=0,
                              keep_in_isr=mutant == "keep_offline_replica_in_isr")
    c.extra["leader after broker 0's directory failed"] = leader
    c.extra["broker 0 in the ISR after"] = isr[0]
    alone = z3.And([z3.Not(c.partition.isr[r]) for r in range(1, c.n)])
    return z3.And(leader != 0, z3.Or(z3.Not(isr[0]), alone))


def _fenced_leads_nothing(c: Cluster, mutant: str) -> z3.BoolRef:
    leader = rules.fence(c.partition, c.registrations, 0, mutant)
    c.extra["leader after broker 0 is fenced"] = leader
    return leader != 0


def _designated_safe(c: Cluster, mutant: str) -> z3.BoolRef:
    accepted = rules.designated_accepted(c.partition, c.registrations, 0, mutant)
    c.extra["designated election of broker 0 accepted"] = accepted
    return z3.Implies(accepted, z3.And(c.partition.leader == NO_LEADER,
                                       rules.truly_acceptable(c.partition.dirs[0], c.registrations[0])))


def _markers(c: Cluster, mutant: str) -> z3.BoolRef:
    r = c.registrations[0]
    return z3.And(rules.is_online(rules.UNASSIGNED, r), rules.is_online(rules.MIGRATING, r),
                  z3.Not(rules.is_online(rules.LOST, r)))


LEMMAS = (
    Lemma("MarkersOnline",
          "in any registration, a replica UNASSIGNED or MIGRATING counts as online and one LOST never does",
          _markers),
    Lemma("RegistrationRejectsReserved",
          "a registration is accepted only if none of its directories is a reserved UUID "
          "(most significant 64 bits zero, least significant < 100)",
          _registration_rejects_reserved, ("reserved_uuids",)),
    Lemma("EpochGateExact",
          "the broker-epoch gate lets a request through exactly when its broker is registered and the "
          "request carries the registered epoch",
          _gate_exact, ("skip_epoch_check",)),
    Lemma("ElectedLeaderAcceptable",
          "a clean election elects only an ISR member that is registered, unfenced and on a directory "
          "online in its registration",
          _elected_leader_acceptable, ("elect_ignoring_dirs",)),
    Lemma("ElectedWhenPossible",
          "a clean election leaves the partition leaderless only when no ISR member is registered, "
          "unfenced and on a directory online in its registration",
          _elected_when_possible, ("no_dirs_all_offline",)),
    Lemma("FailedReplicaLeaves",
          "when a broker's directory of a partition fails, the broker leads it no more and leaves its ISR, "
          "unless it was the ISR's only member",
          _failed_replica_leaves, ("keep_offline_replica_in_isr",)),
    Lemma("FencedBrokerLeadsNothing",
          "fencing a broker takes away its leadership of every partition whose ISR holds it",
          _fenced_leads_nothing, ("fenced_leader_kept",)),
    Lemma("DesignatedElectionSafe",
          "a designated election goes ahead only for a leaderless partition and a replica registered, "
          "unfenced and on a directory online in its registration",
          _designated_safe, ("designated_with_leader", "elect_ignoring_dirs")),
)
#: mutant -> the lemmas it breaks
RULE_MUTANTS = {mutant: tuple(l.name for l in LEMMAS if mutant in l.broken_by) for l in LEMMAS for mutant in l.broken_by}
