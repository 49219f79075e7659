"""Between the z3 controller state of :mod:`.induction` and the model's own states.

The model numbers directory IDs with small ints (``model/uuids.py``: the markers 0..2, another
reserved value 3, real ones from 4); z3 uses Kafka's 128-bit ``Uuid``.  A small id maps to
``Uuid(0, n)`` when reserved and to ``Uuid(1, n)`` when real, and back; a z3 model's arbitrary
real UUIDs are renamed to fresh small ids in order of first appearance.

The z3 state covers the controller's variables for one partition whose replicas are all the
brokers in order (the model's partition 0 when the replication factor is the broker count).
"""

from __future__ import annotations

import z3

from kraftcheck.model.state import DIRS, ISR, LEADER, MV_3_7_IV2, NO_LEADER
from kraftcheck.model.uuids import FIRST_REAL, RESERVED3

from . import rules
from .induction import ControllerState


def uuid128(small: int) -> int:
    """A model directory ID as a Kafka Uuid's 128 bits."""
    return small if small < FIRST_REAL else (1 << 64) | small


def bv(small: int):
    return z3.BitVecVal(uuid128(small), rules.UUID_BITS)


def fixed_to(s: ControllerState, image: tuple) -> z3.BoolRef:
    """``s`` equal to the model's controller image (``Records.controller_image``) for partition 0."""
    epochs, fenced, online, partitions = image[:4]
    claims = []
    for b, r in enumerate(s.registrations):
        claims += [r.epoch == epochs[b], r.fenced == fenced[b]]
        dirs = sorted(online[b])
        if len(dirs) > len(r.dirs):
            raise ValueError(f"broker {b} registers {len(dirs)} directories, the z3 state holds {len(r.dirs)}")
        for i, (listed, uuid) in enumerate(r.dirs):
            claims += [listed, uuid == bv(dirs[i])] if i < len(dirs) else [z3.Not(listed), uuid == 0]
    part = partitions[0]
    if part is None:
        claims += [z3.Not(s.created), s.partition.leader == NO_LEADER]
        claims += [flag == False for flag in s.partition.isr]  # noqa: E712 - a z3 term
        claims += [d == 0 for d in s.partition.dirs]
    else:
        claims += [s.created, s.partition.leader == part[LEADER]]
        claims += [flag == (b in part[ISR]) for b, flag in enumerate(s.partition.isr)]
        claims += [d == bv(part[DIRS][b]) for b, d in enumerate(s.partition.dirs)]
    return z3.And(claims)


def agrees_with(s: ControllerState, image: tuple) -> z3.BoolRef:
    """``s`` holds what the model's controller image says, whatever the slot order of its
    registrations' directories and the UUIDs of unlisted slots."""
    epochs, fenced, online, partitions = image[:4]
    claims = []
    for b, r in enumerate(s.registrations):
        wanted = [bv(d) for d in online[b]]
        claims += [r.epoch == epochs[b], r.fenced == fenced[b]]
        claims += [z3.Implies(listed, z3.Or([uuid == w for w in wanted])) for listed, uuid in r.dirs]
        claims += [z3.Or([z3.And(listed, uuid == w) for listed, uuid in r.dirs]) for w in wanted]
    part = partitions[0]
    if part is None:
        claims.append(z3.Not(s.created))
    else:
        claims += [s.created, s.partition.leader == part[LEADER]]
        claims += [flag == (b in part[ISR]) for b, flag in enumerate(s.partition.isr)]
        claims += [d == bv(part[DIRS][b]) for b, d in enumerate(s.partition.dirs)]
    return z3.And(claims)


class Renaming:
    """Small ids for a z3 model's UUIDs: the model's own where ``known`` has them, fresh ones
    from ``next_real`` for the rest, RESERVED3 for every other reserved value."""

    def __init__(self, known: dict[int, int] | None = None, next_real: int = FIRST_REAL):
        self.small = dict(known or {})
        self.next_real = max([next_real, *[v + 1 for v in self.small.values() if v >= FIRST_REAL]])

    def __call__(self, value: int) -> int:
        if value in self.small:
            return self.small[value]
        if value >> 64 == 0 and (value & (2 ** 64 - 1)) < 100:
            small = value if value < FIRST_REAL - 1 else RESERVED3
        else:
            small, self.next_real = self.next_real, self.next_real + 1
        self.small[value] = small
        return small


def image_of(s: ControllerState, model: z3.ModelRef, rename: Renaming, incarnations: tuple, partitions: int,
             before: tuple | None = None) -> tuple:
    """The model's controller image that ``s`` holds in ``model`` (partition 0; the other
    partitions none; ``incarnations`` as given, the z3 state keeps none).  The z3 state keeps no
    partition epochs either: they are those of partition 0 in ``before`` (0 without), the leader
    epoch one up when the leader differs, the partition epoch when anything does."""

    def value(term):
        return model.eval(term, model_completion=True)

    epochs = tuple(value(r.epoch).as_signed_long() for r in s.registrations)
    fenced = tuple(z3.is_true(value(r.fenced)) for r in s.registrations)
    online = tuple(tuple(sorted(rename(value(u).as_long()) for q, u in r.dirs if z3.is_true(value(q))))
                   for r in s.registrations)
    if z3.is_true(value(s.created)):
        part = (value(s.partition.leader).as_long(),
                tuple(b for b, flag in enumerate(s.partition.isr) if z3.is_true(value(flag))),
                tuple(rename(value(d).as_long()) for d in s.partition.dirs))
        if before is None:
            part += (0, 0)
        else:
            part += (before[3] + (part[0] != before[0]), before[4] + (part != before[:3]))
    else:
        part = None
    return epochs, fenced, online, (part,) + (None,) * (partitions - 1), incarnations, MV_3_7_IV2


def comparable(image: tuple) -> tuple:
    """What the z3 state holds of a model image: the registrations and partition 0's leader,
    ISR and directories (not its epochs, the incarnations or the metadata version)."""
    part = image[3][0]
    return (image[0], image[1], image[2], None if part is None else part[:3])

