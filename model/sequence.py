"""The traces' message sequence chart of a Kafka run: a lane for the controller and one per
broker, each message from the step that sent it to the step that took it off the network (or
lost it), and each step's state changes as notes in the lane they belong to.

``sequence(steps)`` reads the variables exactly as ``KRaftJBOD.describe`` names them (a trace
holds nothing else) and returns the plain structure ``kraftcheck.traces.sequence`` draws; it
raises ``ValueError`` for values that are no state of this model (an edited trace).
"""

from __future__ import annotations

import re
from collections import Counter, deque

CONTROLLER = "controller"
#: Requests go from a broker to the controller; every other message kind the other way.
REQUESTS = ("Register", "Heartbeat", "AssignReplicasToDirs", "AlterReplicaState", "AlterPartition")
LOSS = "NetworkLosesMessage"
_BROKER_IN_LABEL = re.compile(r"\(b(\d+)[,)]")


def sequence(steps) -> dict:
    """The chart of ``steps`` (``kraftcheck.traces.sequence.ChartStep``: action, values, ...) in
    trace order; ``ValueError`` for values no run of this model holds, however they fail."""
    try:
        return _chart(steps)
    except (TypeError, KeyError, IndexError, AttributeError) as e:  # an edited trace's values
        raise ValueError(f"not a trace of the Kafka model ({type(e).__name__}: {e})") from None


def _chart(steps) -> dict:
    if not steps:
        raise ValueError("no steps")
    first = _state(steps[0].values, 0)
    lanes = [CONTROLLER] + [f"b{b}" for b in range(len(first["brokerStatus"]))]
    messages: list[dict] = []
    open_by_label: dict[str, deque] = {}
    notes: list[dict] = []
    for index in range(1, len(steps)):
        action, values = steps[index].action, steps[index].values
        before, after = _state(steps[index - 1].values, index - 1), _state(values, index)
        was, now = Counter(_labels(before)), Counter(_labels(after))
        for label in sorted(was - now):
            for _ in range((was - now)[label]):
                queue = open_by_label.get(label)
                if not queue:
                    raise ValueError(f"state {index + 1}: {label!r} leaves the network without having entered it")
                message = messages[queue.popleft()]
                message["delivered"] = index
                message["lost"] = action == LOSS
        for label in sorted(now - was):
            for _ in range((now - was)[label]):
                sender, receiver = _ends(label, len(lanes) - 1)
                open_by_label.setdefault(label, deque()).append(len(messages))
                messages.append({"label": label, "sender": sender, "receiver": receiver, "sent": index,
                                 "delivered": None, "lost": False})
        for lane, text in _notes(before, after, action):
            notes.append({"step": index, "lane": lane, "text": text})
    return {"lanes": lanes, "messages": messages, "notes": notes}


def _state(values: dict, index: int) -> dict:
    if not isinstance(values, dict) or not isinstance(values.get("brokerStatus"), list):
        raise ValueError(f"state {index + 1} is no state of the Kafka model")  # numbered as every view numbers it
    return values


def _labels(values: dict) -> list[str]:
    network = values.get("network", [])
    if not isinstance(network, list) or not all(isinstance(m, str) for m in network):
        raise ValueError("the network is not a list of messages")
    return network


def _ends(label: str, brokers: int) -> tuple[str, str]:
    """Sender and receiver lanes of a message, from its label."""
    found = _BROKER_IN_LABEL.search(label)
    if found is None or int(found.group(1)) >= brokers:
        raise ValueError(f"{label!r} names no broker of this run")
    broker = f"b{found.group(1)}"
    kind = label.split("(", 1)[0]
    return (broker, CONTROLLER) if kind in REQUESTS else (CONTROLLER, broker)


def _changed(before: dict, after: dict, name: str):
    return before.get(name) != after.get(name)


def _notes(before: dict, after: dict, action: str | None) -> list[tuple[str, str]]:
    """What changed, as short notes in the lane it belongs to (brokers' own variables in their
    lane, the controller's metadata in its lane)."""
    notes: list[tuple[str, str]] = []
    after_status = after["brokerStatus"]
    for b in range(len(after_status)):
        lane = f"b{b}"

        def at(name, default=None):
            values = after.get(name)
            return values[b] if isinstance(values, list) and b < len(values) else default

        def was(name, default=None):
            values = before.get(name)
            return values[b] if isinstance(values, list) and b < len(values) else default

        if was("incarnation") != at("incarnation"):
            notes.append((lane, f"incarnation {at('incarnation')}"))
        if was("brokerStatus") != after_status[b]:
            notes.append((lane, str(after_status[b])))
        if was("knownEpoch") != at("knownEpoch") and at("knownEpoch"):
            notes.append((lane, f"epoch {at('knownEpoch')}"))
        ids, states = at("dirIds", []) or [], at("dirState", []) or []
        old_ids, old_states = was("dirIds", []) or [], was("dirState", []) or []
        for i in range(min(len(ids), len(states))):
            if i < len(old_ids) and old_ids[i] != ids[i]:
                notes.append((lane, f"slot {i} formatted {ids[i]}"))
            if i < len(old_states) and old_states[i] != states[i]:
                notes.append((lane, f"{ids[i]} {states[i]}"))
        logs, old_logs = at("logs", []) or [], was("logs", []) or []
        for i in range(min(len(logs), len(old_logs), len(ids))):
            for p in sorted(set(logs[i]) - set(old_logs[i])):
                notes.append((lane, f"p{p} log on {ids[i]}"))
            for p in sorted(set(old_logs[i]) - set(logs[i])):
                notes.append((lane, f"p{p} log off {ids[i]}"))
        queued, old_queued = at("queued", []) or [], was("queued", []) or []
        for p in range(min(len(queued), len(old_queued))):
            if queued[p] != old_queued[p] and queued[p] != "NONE":
                notes.append((lane, f"queued p{p} → {queued[p]}"))
        # the data plane: a replica's log and high watermark, as epochs by offset
        records, old_records = at("replicaLog", []) or [], was("replicaLog", []) or []
        marks, old_marks = at("highWatermark", []) or [], was("highWatermark", []) or []
        for p in range(min(len(records), len(old_records), len(marks), len(old_marks))):
            if (records[p], marks[p]) != (old_records[p], old_marks[p]):
                notes.append((lane, f"p{p} log {records[p]} hw {marks[p]}"))
    notes += [(CONTROLLER, text) for text in _controller_notes(before, after)]
    if action == "ControllerCommits":
        notes.append((CONTROLLER, "committed"))
    elif action == "ControllerFailsOver":
        notes.append((CONTROLLER, "failed over"))
    return notes


def _controller_notes(before: dict, after: dict) -> list[str]:
    notes = []
    for b, (old, new) in enumerate(zip(before.get("fenced", []), after.get("fenced", []))):
        if old != new:
            notes.append(f"b{b} {'fenced' if new else 'unfenced'}")
    for b, (old, new) in enumerate(zip(before.get("brokerEpoch", []), after.get("brokerEpoch", []))):
        if old != new:
            notes.append(f"b{b} epoch {new}")
    for b, (old, new) in enumerate(zip(before.get("onlineDirs", []), after.get("onlineDirs", []))):
        if old != new:
            notes.append(f"b{b} dirs [{', '.join(map(str, new))}]")
    for p, (old, new) in enumerate(zip(before.get("partition", []), after.get("partition", []))):
        if old == new or not isinstance(new, dict):
            continue
        if not isinstance(old, dict):
            notes.append(f"p{p} created: leader {new.get('leader')}, isr {new.get('isr')}")
            continue
        said = [f"{key} {new.get(key)}" for key in ("leader", "isr", "dirs") if old.get(key) != new.get(key)]
        if said:
            notes.append(f"p{p} {', '.join(said)}")
    if _changed(before, after, "metadataVersion"):
        notes.append(f"metadata.version {after.get('metadataVersion')}")
    return notes
