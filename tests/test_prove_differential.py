"""The z3 step relations of ``prove --induction`` against the model's own successors.

Every reachable state of the lookup configs of ``prove --induction`` (proofs/reach.py: the
code's semantics, partition 0's replicas all the brokers) is fixed as z3's pre-state; for each successor the model takes by an encoded
action that changes the controller's variables, z3's step, with the request's values fixed,
must allow exactly the model's post-state (the registrations and partition 0's leader, ISR and
directories).  Where the model's guard is the controller's own (a designated election,
partition creation, fencing a registered unfenced broker), z3 must not allow a step the model
does not take.
"""

from __future__ import annotations

from collections import Counter

import pytest
import z3

from kraftcheck.model import make_model
from kraftcheck.model.state import BROKER_EPOCH, FENCED, ONLINE_DIRS
from kraftcheck.proofs import induction
from kraftcheck.proofs.reach import LOOKUP, spaces
from kraftcheck.proofs.concrete import Renaming, agrees_with, comparable, fixed_to, image_of, uuid128

#: semantics -> model action -> the z3 step relation that encodes it
STEPS = {semantics: {name: action.step for action in actions for name in action.model_actions}
         for semantics, actions in induction.ACTIONS_BY_SEMANTICS.items()}


def broker_of(action) -> int | None:
    name, *params = action
    if name in ("ControllerCreatesPartition",):
        return None
    if name == "AdminElectsDesignatedLeader":
        return params[1]
    if isinstance(params[0], tuple):
        return params[0][1]
    return params[0]


def request_values(model, action, pre, post, s, t, b):
    """The values z3 leaves free that the model's request fixes: the heartbeat's offline
    directories and wantFence, the registration's directories and the epoch it is given."""
    name, *params = action
    if name == "ControllerHandlesHeartbeat":
        offline, want_fence = params[0][3], params[0][4]
        registered = sorted(s[ONLINE_DIRS][b])
        tag = post.tag
        claims = [z3.Bool(f"want_fence_b{b}{tag}") == want_fence]
        for i in range(len(pre.registrations[b].dirs)):
            claims.append(z3.Bool(f"reports_dir{i}_offline_b{b}{tag}") ==
                          (i < len(registered) and registered[i] in offline))
        return claims
    if name == "ControllerHandlesAssignment":
        return [z3.BitVec(f"assigned_dir_b{b}{post.tag}", 128) == uuid128(params[0][4])]
    if name.startswith("ControllerHandlesRegistration"):
        r = post.registrations[b]
        dirs = sorted(t[ONLINE_DIRS][b])
        claims = [r.epoch == t[BROKER_EPOCH][b]]
        for i, (listed, uuid) in enumerate(r.dirs):
            claims += [listed, uuid == uuid128(dirs[i])] if i < len(dirs) else [z3.Not(listed)]
        return claims
    return []


def stepping(relation, n: int, dirs: int, image: tuple, b: int | None):
    """A solver holding a step of ``relation`` by broker ``b`` from the model's controller
    ``image``; with the pre- and post-state it speaks of."""
    pre, post = induction.ControllerState(n, dirs, ""), induction.ControllerState(n, dirs, "'")
    solver = z3.Solver()
    solver.add(fixed_to(pre, image), relation(pre, post, b, "none"))
    return pre, post, solver


def differences(config: str, semantics: str = "code"):
    """Every reachable state of the lookup config ``config`` (proofs/reach.py) against z3."""
    model = make_model(dict(LOOKUP[config], semantics=semantics))
    states = next(space.in_order for space in spaces(semantics) if space.name == config)
    steps = STEPS[semantics]
    n, dirs = model.settings.brokers, model.settings.dirs_per_broker
    checked, skipped, mismatches = Counter(), Counter(), []
    done = set()
    for s in states:
        image = model.controller_image(s)
        for action, t in model.successors(s):
            if action[0] not in steps or comparable(model.controller_image(t)) == comparable(image):
                continue
            if action[0].startswith("ControllerHandlesRegistration") and t[BROKER_EPOCH] == s[BROKER_EPOCH]:
                skipped["amended registration (same incarnation): not encoded"] += 1
                continue
            key = (action[0], comparable(image), tuple(action[1:]) if action[0] != "ControllerHandlesHeartbeat"
                   else (action[1][1], action[1][3], action[1][4]), comparable(model.controller_image(t)))
            if key in done:
                continue
            done.add(key)
            b = broker_of(action)
            pre, post, solver = stepping(steps[action[0]], n, dirs, image, b)
            solver.add(*request_values(model, action, pre, post, s, t, b))
            if solver.check() != z3.sat:
                mismatches.append((model.describe_action(action), "z3 allows no step"))
                continue
            known = {uuid128(u): u for u in range(0, 40)}
            got = image_of(post, solver.model(), Renaming(known), image[4], len(model.partitions))
            if comparable(got) != comparable(model.controller_image(t)):
                mismatches.append((model.describe_action(action), comparable(got), comparable(model.controller_image(t))))
                continue
            solver.add(z3.Not(agrees_with(post, model.controller_image(t))))
            if solver.check() != z3.unsat:
                mismatches.append((model.describe_action(action), "z3 allows another post-state"))
                continue
            checked[action[0]] += 1
        # the controller's own guards: z3 takes no step the model does not
        for b in model.brokers:
            guards = {
                "AdminElectsDesignatedLeader": any(a == ("AdminElectsDesignatedLeader", 0, b) for a, _ in model.successors(s)),
                "ControllerFencesExpiredBroker": bool(s[BROKER_EPOCH][b]) and not s[FENCED][b],
            }
            if b == 0:
                guards["ControllerCreatesPartition"] = any(a == ("ControllerCreatesPartition", 0)
                                                           for a, _ in model.successors(s))
            for name, enabled in guards.items():
                if enabled or (name, comparable(image), b) in done:
                    continue
                done.add((name, comparable(image), b))
                _, _, solver = stepping(steps[name], n, dirs, image, b)
                if solver.check() != z3.unsat:
                    mismatches.append((name, b, "z3 takes a step the model's guard refuses"))
                checked[f"{name} refused"] += 1
    return checked, skipped, mismatches


#: (semantics, config) -> action -> distinct (image, request, outcome) steps agreed, and guards refused
AGREED = {
    ("code", "1 broker × 2 dirs"): {
        "AdminElectsDesignatedLeader": 10, "AdminElectsDesignatedLeader refused": 125, "ControllerCreatesPartition": 10,
        "ControllerCreatesPartition refused": 125, "ControllerFencesExpiredBroker": 71,
        "ControllerFencesExpiredBroker refused": 64, "ControllerHandlesAlterReplicaState": 45,
        "ControllerHandlesAssignment": 145, "ControllerHandlesHeartbeat": 113, "ControllerHandlesRegistration": 62,
        "ControllerHandlesRegistrationAfterSessionTimeout": 78},
    ("code", "2 brokers × 1 dir"): {
        "AdminElectsDesignatedLeader": 6, "AdminElectsDesignatedLeader refused": 102, "ControllerCreatesPartition": 9,
        "ControllerCreatesPartition refused": 45, "ControllerFencesExpiredBroker": 50,
        "ControllerFencesExpiredBroker refused": 58, "ControllerHandlesHeartbeat": 48, "ControllerHandlesRegistration": 44,
        "ControllerHandlesRegistrationAfterSessionTimeout": 32},
    ("kip", "1 broker × 2 dirs"): {
        "AdminElectsDesignatedLeader refused": 85, "ControllerCreatesPartition": 8, "ControllerCreatesPartition refused": 77,
        "ControllerFencesExpiredBroker": 42, "ControllerFencesExpiredBroker refused": 43,
        "ControllerHandlesAlterReplicaState": 28, "ControllerHandlesAssignment": 95, "ControllerHandlesHeartbeat": 74,
        "ControllerHandlesRegistration": 74},
    ("kip", "2 brokers × 1 dir"): {
        "AdminElectsDesignatedLeader": 6, "AdminElectsDesignatedLeader refused": 90, "ControllerCreatesPartition": 9,
        "ControllerCreatesPartition refused": 39, "ControllerFencesExpiredBroker": 46,
        "ControllerFencesExpiredBroker refused": 50, "ControllerHandlesHeartbeat": 40, "ControllerHandlesRegistration": 46},
}


@pytest.mark.parametrize("semantics", ["code", "kip"])
@pytest.mark.parametrize("config", sorted(LOOKUP))
def test_the_step_relations_take_exactly_the_models_steps(config, semantics):
    checked, skipped, mismatches = differences(config, semantics)
    assert mismatches == []
    assert dict(checked) == AGREED[semantics, config]
    assert not skipped


def test_a_step_relation_that_differs_from_the_model_is_caught(monkeypatch):
    """The heartbeat's relation without the unfencing's election, against the model as it is:
    the differential reports the steps where they part."""
    def unfences_without_election(pre, post, b, mutant):
        return induction.handles_heartbeat(pre, post, b, "unfence_without_election")

    monkeypatch.setitem(STEPS["code"], "ControllerHandlesHeartbeat", unfences_without_election)
    _, _, mismatches = differences("1 broker × 2 dirs")
    assert mismatches and {m[0].split("(")[0] for m in mismatches} == {"ControllerHandlesHeartbeat"}
