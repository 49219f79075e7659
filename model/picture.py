"""The Kafka cluster of one trace state as a picture: the model's ``picture`` hook for traces.

``picture(vars, previous)`` draws from the variables exactly as ``KRaftJBOD.describe`` names
them (nothing else), and returns a graphviz HTML-like ``<TABLE>``:

- one column per broker: a box with its status, incarnation and broker epoch, holding its log directories
  (short UUID names, online or failed), each holding the replicas on it (leader and ISR
  marked, future replicas of a move, assignments queued for the controller);
- under each broker, the controller's view of it (registered epoch, fenced, online
  directories), with what disagrees with the broker's own state in red;
- the partitions as the controller's metadata has them, and the messages in flight.

Whatever differs from ``previous`` (the step before) is highlighted.  Values that are no
state of the model (a trace edited by hand, or another model's) raise ``ValueError``, as the
picture hook's protocol asks: the trace readers then draw the table of variables.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kraftcheck.traces.text import escape_label as _e

CHANGED = "#ffe27a"  # what this step changed
WRONG = "#c0392b"  # the controller's view disagrees with the broker
ONLINE = "#e4f3e0"
FAILED = "#f6c9c3"
OFF = "#e6e6e6"
BROKER = "#f7f9fc"
NONE = -1  # no future replica
NO_LEADER = -1
NO_PARTITION = "NoPartition"
NO_DIR = "NONE"


def picture(vars: dict, previous: dict | None = None) -> str:  # noqa: A002 - the hook's documented name
    """The cluster at this step, what changed since ``previous`` highlighted; ``ValueError`` when
    the values are no state of the Kafka model."""
    try:
        return _picture(vars, previous)
    except (TypeError, KeyError, IndexError, AttributeError, ValueError) as e:
        # what indexing, iterating and comparing values of the wrong shape raise: a list
        # where the model has a number, a record without its fields
        raise ValueError(f"not a state of the Kafka model ({type(e).__name__}: {e})") from None


def _picture(vars: dict, previous: dict | None) -> str:  # noqa: A002
    now = _View(vars)
    before = _View(previous) if previous else None
    brokers = range(len(now.get("brokerStatus", [])))
    columns = len(brokers) or 1
    rows = [
        "<TR>" + "".join(f"<TD VALIGN=\"TOP\">{_broker(now, before, b)}</TD>" for b in brokers) + "</TR>",
        "<TR>" + "".join(f"<TD VALIGN=\"TOP\">{_controller_view(now, before, b)}</TD>" for b in brokers) + "</TR>",
    ] if brokers else []
    rows += [
        f'<TR><TD COLSPAN="{columns}" ALIGN="LEFT">{_partitions(now, before)}</TD></TR>',
        f'<TR><TD COLSPAN="{columns}" ALIGN="LEFT">{_network(now, before)}</TD></TR>',
        f'<TR><TD COLSPAN="{columns}" ALIGN="LEFT">{_counters(now, before)}</TD></TR>',
    ]
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="4" CELLPADDING="0">{"".join(rows)}</TABLE>'


class _View:
    """The described variables, read defensively: a missing entry reads as None."""

    def __init__(self, values: dict):
        self.values = values

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def at(self, name: str, *path: Any) -> Any:
        value = self.values.get(name)
        for key in path:
            try:
                value = value[key]
            except (IndexError, KeyError, TypeError):
                return None
        return value

    def replicas(self, p: int) -> list[int]:
        """The brokers holding partition p, in the order of its ``dirs`` (the model's fixed
        assignment: p, p+1, ... modulo the number of brokers)."""
        part = self.at("partition", p)
        count = len(part["dirs"]) if isinstance(part, dict) else 0
        brokers = len(self.get("brokerStatus", []))
        return [(p + i) % brokers for i in range(count)] if brokers else []

    def assigned_dir(self, p: int, b: int) -> str | None:
        """The directory the controller's metadata gives broker b's replica of p."""
        part = self.at("partition", p)
        if not isinstance(part, dict) or b not in self.replicas(p):
            return None
        return part["dirs"][self.replicas(p).index(b)]

    def online(self, b: int) -> list[str]:
        """The directories broker b can use now (its disks that have not failed)."""
        ids, states = self.at("dirIds", b) or [], self.at("dirState", b) or []
        return [d for d, state in zip(ids, states) if state == "HEALTHY"]


def _uuid(name: Any) -> str:
    """A directory UUID, short: the model's names (``dir-3``, ``LOST``) as they are, a long
    one (a real UUID's base64 or hex form) cut to its first 8 characters."""
    text = str(name)
    return _e(text if len(text) <= 12 else text[:8] + "…")


def _bg(changed: bool, otherwise: str | None = None) -> str:
    colour = CHANGED if changed else otherwise
    return f' BGCOLOR="{colour}"' if colour else ""


def _differs(now: _View, before: _View | None, name: str, *path: Any) -> bool:
    return before is not None and now.at(name, *path) != before.at(name, *path)


# ------------------------------------------------------------------------- brokers


def _broker(now: _View, before: _View | None, b: int) -> str:
    status = now.at("brokerStatus", b)
    incarnation = now.at("incarnation", b)
    known_epoch = now.at("knownEpoch", b)
    header_changed = any(_differs(now, before, name, b) for name in ("brokerStatus", "incarnation", "knownEpoch"))
    background = OFF if status == "OFF" else BROKER
    epoch_text = f", epoch {_e(known_epoch)}" if known_epoch else ""
    header = (f'<TR><TD ALIGN="LEFT"{_bg(header_changed)}><B>broker {b}</B>  {_e(status)}'
              f'  <FONT POINT-SIZE="9">incarnation {_e(incarnation)}{epoch_text}</FONT></TD></TR>')
    dirs = [_directory(now, before, b, slot) for slot in range(len(now.at("dirIds", b) or []))]
    queued = _queued(now, before, b)
    body = ("".join(f"<TR><TD>{d}</TD></TR>" for d in dirs) + queued + _replica_logs(now, before, b)
            + _loaded_metadata(now, before, b))
    return (f'<TABLE BORDER="1" COLOR="#4a6fa5" CELLBORDER="0" CELLSPACING="3" CELLPADDING="2"'
            f' BGCOLOR="{background}">{header}{body}</TABLE>')


def _directory(now: _View, before: _View | None, b: int, slot: int) -> str:
    uuid = now.at("dirIds", b, slot)
    state = now.at("dirState", b, slot)
    healthy = state == "HEALTHY"
    changed = any(_differs(now, before, name, b, slot) for name in ("dirIds", "dirState", "logs")) or (
        before is not None and _futures(now, b, slot) != _futures(before, b, slot))
    colour = ONLINE if healthy else FAILED
    if now.at("brokerStatus", b) == "OFF":
        colour = OFF
    state_text = {"HEALTHY": "online", "FAILED": "FAILED", "FAILED_ACKED": "FAILED (acked)"}.get(state, state)
    if healthy and now.at("brokerStatus", b) == "OFF":
        state_text = "healthy, broker off"
    title = f'<B>{_uuid(uuid)}</B> <FONT POINT-SIZE="9">slot {slot}</FONT> {_e(state_text)}'
    if not healthy:
        title = f'<S>{_uuid(uuid)}</S> <FONT POINT-SIZE="9">slot {slot}</FONT> <B>{_e(state_text)}</B>'
    # KIP-1066: the broker's cordoned.log.dirs names this directory
    cordoned = slot in (now.at("cordoned", b) or [])
    if cordoned:
        title += ' <B>cordoned</B>'
    if before is not None and cordoned != (slot in (before.at("cordoned", b) or [])):
        changed = True
    # the controller's opinion of this directory, when it disagrees
    registered = now.at("onlineDirs", b) or []
    if now.at("brokerEpoch", b) and registered:
        if healthy and uuid not in registered:
            title += f' <FONT COLOR="{WRONG}">controller: offline</FONT>'
        elif not healthy and uuid in registered:
            title += f' <FONT COLOR="{WRONG}">controller: online</FONT>'
    replicas = [_replica(now, before, b, slot, p) for p in (now.at("logs", b, slot) or [])]
    futures = _futures(now, b, slot)
    replicas += [f'<FONT COLOR="#555555">p{_e(p)} (future)</FONT>' for p in futures]
    content = "  ".join(replicas) if replicas else '<FONT COLOR="#777777">no replicas</FONT>'
    border = "#2e7d32" if healthy else WRONG
    return (f'<TABLE BORDER="1" COLOR="{border}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2"{_bg(changed, colour)}>'
            f'<TR><TD ALIGN="LEFT">{title}</TD></TR><TR><TD ALIGN="LEFT">{content}</TD></TR></TABLE>')


def _futures(view: _View, b: int, slot: int) -> list[int]:
    """The partitions whose future replica (a move in progress) broker b is building in ``slot``."""
    return [p for p, s in enumerate(view.at("future", b) or []) if s == slot]


def _replica(now: _View, before: _View | None, b: int, slot: int, p: int) -> str:
    part = now.at("partition", p)
    marks = []
    if isinstance(part, dict):
        # leading, or in the ISR, from a directory that failed: what the invariants forbid
        offline = now.at("dirState", b, slot) != "HEALTHY"
        if part.get("leader") == b:
            marks.append(f'<FONT COLOR="{WRONG}"><B>leader</B></FONT>' if offline else "<B>leader</B>")
        if b in (part.get("isr") or []):
            marks.append(f'<FONT COLOR="{WRONG}">ISR</FONT>' if offline else "ISR")
        assigned = now.assigned_dir(p, b)
        here = now.at("dirIds", b, slot)
        if assigned is not None and assigned != here:
            marks.append(f'<FONT COLOR="{WRONG}">controller: {_uuid(assigned)}</FONT>')
    text = f"<B>p{_e(p)}</B>" + (f" {' '.join(marks)}" if marks else "")
    return f"&#91;{text}&#93;"


def _queued(now: _View, before: _View | None, b: int) -> str:
    items = [(p, d) for p, d in enumerate(now.at("queued", b) or []) if d != NO_DIR]
    changed = _differs(now, before, "queued", b)
    if not items:
        if not changed:
            return ""
        return (f'<TR><TD ALIGN="LEFT"{_bg(True)}><FONT POINT-SIZE="9">to tell the controller: nothing'
                "</FONT></TD></TR>")
    text = ", ".join(f"p{p} in {_uuid(d)}" for p, d in items)
    return f'<TR><TD ALIGN="LEFT"{_bg(changed)}><FONT POINT-SIZE="9">to tell the controller: {text}</FONT></TD></TR>'


def replica_log_text(records: list, high_watermark: Any, flushed: Any = None) -> str:
    """A replica's log as the picture shows it: the leader epoch of each record by offset, its
    log end offset and its high watermark (and, when machines may lose power, how much of it
    is on disk)."""
    shown = " ".join(f"e{_e(epoch)}" for epoch in records) if records else "empty"
    on_disk = f", flushed {_e(flushed)}" if flushed is not None else ""
    return f"[{shown}]  end {len(records)}, hw {_e(high_watermark)}{on_disk}"


def _replica_logs(now: _View, before: _View | None, b: int) -> str:
    """With the data plane: each replica's log (records by leader epoch), end and high watermark."""
    logs = now.at("replicaLog", b)
    if not isinstance(logs, list):
        return ""
    on_disk = {p for slot in (now.at("logs", b) or []) if isinstance(slot, list) for p in slot}
    rows = []
    for p, records in enumerate(logs):
        mark = now.at("highWatermark", b, p)
        if not isinstance(records, list) or (not records and not mark and p not in on_disk):
            continue
        changed = any(_differs(now, before, name, b, p) for name in ("replicaLog", "highWatermark", "followerEnd", "flushed"))
        text = f"p{p} log {replica_log_text(records, mark, now.at('flushed', b, p))}"
        heard = now.at("followerEnd", b, p)
        if isinstance(heard, dict) and heard.get("leaderEpoch", -1) >= 0:
            # what it learned of its followers while leading in that epoch (KIP-903: and the
            # broker epoch their fetch carried)
            followers = [f"b{r} at {_e(end)} (epoch {_e(epoch)})"
                         for r, (end, epoch) in enumerate(zip(heard.get("ends") or [], heard.get("fetchEpochs") or []))
                         if r != b and isinstance(end, int) and end >= 0]
            if followers:
                text += f"; as leader in e{_e(heard.get('leaderEpoch'))} heard {', '.join(followers)}"
        if now.at("partition", p, "leader") == b and _lacks_acknowledged(now, p, records):
            text = f'<FONT COLOR="{WRONG}">{text}, leader without acknowledged records</FONT>'
        rows.append(f'<TR><TD ALIGN="LEFT"{_bg(changed)}><FONT POINT-SIZE="9">{text}</FONT></TD></TR>')
    return "".join(rows)


def _loss_text(lost) -> str:
    """An acknowledged record's fate: nothing when kept, else the declared loss that gave it up."""
    if not isinstance(lost, dict):
        return ""
    election, disk, power = lost.get("election"), lost.get("replacedDisk"), lost.get("powerLoss")
    if isinstance(election, dict):
        return f' <FONT COLOR="{WRONG}">lost: b{_e(election.get("leader"))} elected unclean in e{_e(election.get("leaderEpoch"))}</FONT>'
    if isinstance(disk, dict):
        return f' <FONT COLOR="{WRONG}">lost: b{_e(disk.get("broker"))}\'s disk replaced</FONT>'
    if isinstance(power, dict):
        return f' <FONT COLOR="{WRONG}">lost: b{_e(power.get("broker"))} lost power, unflushed</FONT>'
    return ""


def _lacks_acknowledged(now: _View, p: int, records: list) -> bool:
    """Some record acknowledged to its producer is not at its offset in ``records``."""
    for entry in now.at("acked", p) or []:
        if not isinstance(entry, dict):
            continue
        offset = entry.get("offset")
        if not isinstance(offset, int) or offset >= len(records) or records[offset] != entry.get("leaderEpoch"):
            return True
    return False


def _loaded_metadata(now: _View, before: _View | None, b: int) -> str:
    """With the brokers' lag modeled: whether the broker's own image is the latest committed
    one, and where it is behind, what it still says about its partitions and its registration."""
    images = now.get("brokerImage") or []
    if b >= len(images):
        return ""
    image = images[b]
    latest = now.get("committedImage") or {name: now.get(name) for name in image}
    changed = before is not None and (before.get("brokerImage") or [None] * (b + 1))[b] != image
    if image == latest:
        text = "metadata loaded: the latest"
    else:
        said = []
        for p, (mine, theirs) in enumerate(zip(image["partition"], latest["partition"])):
            if mine != theirs:
                said.append(f"p{p} not created" if mine == "NoPartition" else
                            f"p{p} leader {_e(mine['leader'])}, isr {_e(mine['isr'])}")
        if image["brokerEpoch"][b] != latest["brokerEpoch"][b]:
            epoch = image["brokerEpoch"][b]
            said.append(f"its registration: epoch {_e(epoch)}" if epoch else "not registered")
        text = "metadata loaded: behind" + (f" ({'; '.join(said)})" if said else "")
        text = f'<FONT COLOR="{WRONG}">{text}</FONT>'
    return f'<TR><TD ALIGN="LEFT"{_bg(changed)}><FONT POINT-SIZE="9">{text}</FONT></TD></TR>'


# ------------------------------------------------------------------------- controller


def _controller_view(now: _View, before: _View | None, b: int) -> str:
    epoch = now.at("brokerEpoch", b)
    fenced = now.at("fenced", b)
    registered = now.at("onlineDirs", b) or []
    lines = []
    changed = _differs(now, before, "brokerEpoch", b) or _differs(now, before, "registeredIncarnation", b)
    epoch_text = f"epoch {_e(epoch)}" if epoch else "not registered"
    # The registration is of another incarnation than the running one (traces from before
    # registeredIncarnation was a variable had the epoch stand for it).
    registered_incarnation = now.at("registeredIncarnation", b)
    if registered_incarnation is None:
        registered_incarnation = epoch
    if epoch and registered_incarnation != now.at("incarnation", b):
        epoch_text = (f'<FONT COLOR="{WRONG}">{epoch_text}, incarnation {_e(registered_incarnation)} '
                      f'(broker: {_e(now.at("incarnation", b))})</FONT>')
    lines.append((epoch_text, changed))
    fenced_text = "<B>fenced</B>" if fenced else "unfenced"
    if fenced is False and now.at("brokerStatus", b) != "RUNNING":
        fenced_text = f'<FONT COLOR="{WRONG}">unfenced (broker {_e(now.at("brokerStatus", b))})</FONT>'
    lines.append((fenced_text, _differs(now, before, "fenced", b)))
    session = now.at("session", b)
    if isinstance(session, bool) and epoch:
        # a release's heartbeat session: what the session check can expire and fence
        lines.append(("heartbeat session" if session else "no heartbeat session", _differs(now, before, "session", b)))
    if epoch:
        actual = now.online(b)
        shown = []
        for d in registered:
            shown.append(_uuid(d) if d in actual else f'<FONT COLOR="{WRONG}">{_uuid(d)}</FONT>')
        dirs_text = ", ".join(shown) if shown else "none registered"
        lines.append((f"online: {dirs_text}", _differs(now, before, "onlineDirs", b)))
        cordons = now.at("registeredCordons", b)
        if cordons is not None:
            # KIP-1066: null until the registered incarnation reports its cordons
            text = "cordoned: " + (", ".join(_uuid(d) for d in cordons) or "none") if isinstance(cordons, list) \
                else "cordoned: null (not reported)"
            lines.append((_e(text) if not isinstance(cordons, list) else text,
                          _differs(now, before, "registeredCordons", b)))
    rows = "".join(f'<TR><TD ALIGN="LEFT"{_bg(c)}>{text}</TD></TR>' for text, c in lines)
    return (f'<TABLE BORDER="1" STYLE="dashed" COLOR="#8e44ad" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9" COLOR="#8e44ad">controller\'s view of broker {b}</FONT>'
            f"</TD></TR>{rows}</TABLE>")


def _partitions(now: _View, before: _View | None) -> str:
    rows = []
    for p, part in enumerate(now.get("partition", [])):
        changed = _differs(now, before, "partition", p)
        if not isinstance(part, dict):
            text = f"<B>p{p}</B>  not created"
        else:
            leader = part.get("leader")
            leader_text = "<B>no leader</B>" if leader == NO_LEADER else f"leader <B>b{_e(leader)}</B>"
            if leader != NO_LEADER and (now.at("fenced", leader) or now.at("brokerStatus", leader) != "RUNNING"):
                leader_text = f'<FONT COLOR="{WRONG}">{leader_text} ({"fenced" if now.at("fenced", leader) else "not running"})</FONT>'
            isr = ", ".join(f"b{_e(r)}" for r in part.get("isr") or [])
            placed = ", ".join(f"b{r} in {_uuid(d)}" for r, d in zip(now.replicas(p), part.get("dirs") or []))
            text = (f"<B>p{p}</B>  {leader_text}  ISR {{{isr}}}  replicas: {placed}"
                    f'  <FONT POINT-SIZE="9">leader epoch {_e(part.get("leaderEpoch"))},'
                    f' partition epoch {_e(part.get("partitionEpoch"))}</FONT>')
            if "elr" in part:
                elr = ", ".join(f"b{_e(r)}" for r in part.get("elr") or [])
                known = ", ".join(f"b{_e(r)}" for r in part.get("lastKnownElr") or [])
                text += f'  ELR {{{elr}}}' + (f'  <FONT POINT-SIZE="9">last known leader {known}</FONT>' if known else "")
            if part.get("leaderRecoveryState") == "RECOVERING":
                text += f'  <FONT COLOR="{WRONG}">RECOVERING</FONT>'

        acked = (now.get("acked") or [])[p:p + 1]
        if acked and acked[0]:
            offsets = ", ".join(f"{_e(e.get('offset'))} (e{_e(e.get('leaderEpoch'))}){_loss_text(e.get('lostBy'))}"
                                for e in acked[0] if isinstance(e, dict))
            text += f'  <FONT POINT-SIZE="9">acknowledged: {offsets}</FONT>'
            changed = changed or _differs(now, before, "acked", p)
        text += _recovery_tool(now, p)
        changed = changed or any(_differs(now, before, "tool", part, p) for part in ("answers", "outcome", "takenUp"))
        rows.append(f'<TR><TD ALIGN="LEFT"{_bg(changed)}>{text}</TD></TR>')
    if not rows:
        rows.append('<TR><TD ALIGN="LEFT">no partitions</TD></TR>')
    return (f'<TABLE BORDER="1" STYLE="dashed" COLOR="#8e44ad" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9" COLOR="#8e44ad">controller\'s metadata</FONT></TD></TR>'
            f'{"".join(rows)}</TABLE>')


def _recovery_tool(now: _View, p: int) -> str:
    """What KIP-1275's recovery tool knows of partition p, once it has taken p up: each answer
    (leader epoch, log end offset) and its outcome."""
    tool = now.get("tool")
    if not isinstance(tool, dict) or not tool:
        return ""
    taken_up = (tool.get("takenUp") or [])[p:p + 1]
    if not taken_up or taken_up[0] == -1:
        return ""
    answers = (tool.get("answers") or [])[p:p + 1]
    heard = [f"b{b} epoch {_e(a.get('leaderEpoch'))} end {_e(a.get('logEndOffset'))}"
             for b, a in enumerate(answers[0] if answers else []) if isinstance(a, dict)]
    outcome = (tool.get("outcome") or [])[p:p + 1]
    return (f'<BR/><FONT POINT-SIZE="9">recovery tool ({_e(outcome[0] if outcome else "")}, taken up in epoch '
            f'{_e(taken_up[0])}): {", ".join(heard) or "no answer yet"}</FONT>')


# ------------------------------------------------------------------------- network, counters


def _network(now: _View, before: _View | None) -> str:
    messages = list(now.get("network", []))
    previous = list(before.get("network", [])) if before is not None else list(messages)
    unmatched = Counter(previous)  # counted, not searched: a long list stays linear
    matched: Counter = Counter()
    rows = []
    for m in messages:
        new = unmatched[m] == 0
        if not new:
            unmatched[m] -= 1
            matched[m] += 1
        rows.append(f'<TR><TD ALIGN="LEFT"{_bg(new)}>&#8594; {_e(m)}</TD></TR>')
    gone = []
    for m in previous:  # delivered or lost by this step: what is left once the first matches are taken
        if matched[m] > 0:
            matched[m] -= 1
        else:
            gone.append(m)
    for m in gone:
        rows.append(f'<TR><TD ALIGN="LEFT" BGCOLOR="{CHANGED}"><FONT COLOR="#777777"><S>{_e(m)}</S>'
                    f"  (gone)</FONT></TD></TR>")
    if not rows:
        rows.append('<TR><TD ALIGN="LEFT"><FONT COLOR="#777777">nothing in flight</FONT></TD></TR>')
    return (f'<TABLE BORDER="1" COLOR="#999999" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9" COLOR="#555555">messages in flight</FONT></TD></TR>'
            f'{"".join(rows)}</TABLE>')


def _counters(now: _View, before: _View | None) -> str:
    names = (("metadataVersion", "metadata.version"), ("nextUuid", "next UUID"), ("dirFailures", "dir failures"),
             ("lostMessages", "lost messages"), ("movesStarted", "moves started"), ("failoversDone", "failovers"),
             ("sessionsExpired", "sessions expired"), ("cleanShutdowns", "clean shutdowns"))
    cells = "".join(
        f'<TD{_bg(_differs(now, before, name))}><FONT POINT-SIZE="9">{label} {_e(now.get(name))}</FONT></TD>'
        for name, label in names if name in now.values
        # failovers only where the metadata log is modeled (a committed image kept)
        and (name != "failoversDone" or now.get("committedImage"))
    )
    if isinstance(now.get("topicConfig"), dict):
        # the topic's configs, where an operator alters them while the cluster runs
        unclean = now.at("topicConfig", "uncleanLeaderElectionEnable")
        cells += "".join(
            f'<TD{_bg(_differs(now, before, "topicConfig", key))}><FONT POINT-SIZE="9">{_e(text)}</FONT></TD>'
            for key, text in (("minInsyncReplicas", f"min.insync.replicas {now.at('topicConfig', 'minInsyncReplicas')}"),
                              ("uncleanLeaderElectionEnable", f"unclean elections {'on' if unclean else 'off'}")))
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2"><TR>{cells or "<TD></TD>"}</TR></TABLE>'
