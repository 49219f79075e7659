"""The local engine on several cores: the same breadth-first search, its levels sharded.

The search starts as the one-core engine (:mod:`.bfs`) does.  When a level first holds
:data:`HAND_OVER_AT` states or more, the process forks ``N`` workers, which inherit the
visited fingerprints and the level as they are, and the rest of the search runs in them.
A search that never holds a level that wide (most of the shipped configs) never forks: a
worker's start and the exchanges of every level would cost more than they save there.

Worker ``w`` owns the fingerprints ``f`` with ``f mod N == w``: it keeps their visited set.
A level runs in two exchanges, over one pipe for each pair of workers (a thread writes what a
worker sends while it reads what it receives, so no two workers wait on each other):

1. each worker generates its states' successors and offers each to the owner of its
   fingerprint, as the fingerprint and the step that reached it: (the parent's index, the
   step's position among the parent's successors).  The state stays where it was generated;
2. each owner keeps, for every offered fingerprint it has not visited, the least step, as the
   one-core engine, which reaches states in that order, keeps the first; and it tells the
   worker that holds that step's state that the state is new.

So only fingerprints and steps cross between workers, never states: a new state is admitted
and expanded by the worker whose step reached it first.  That shares a level out evenly by
itself (a state's least step comes from either worker alike), except from a narrow start or
where one core runs slower than the other, as a virtual machine's do for seconds at a time:
the coordinator then moves states (pickled, a batch per pair of workers) so that each worker
holds a share of the next level in proportion to the speed it expanded the last one at.

A state's index is its position in the order the one-core engine reaches states in.  The
workers send the steps of their new states to the coordinating process, which merges them
in step order and numbers them: state ``first + i`` is the ``i``-th new state of the level
in that order.  So the coordinator holds the parent records as the one-core engine does (a
counterexample is rebuilt from them the same way, :mod:`.path`), and every figure is that
engine's: distinct and generated states, depth, coverage per action (the action of the least
step), the first violating state of each invariant in that order (the same counterexample),
the first deadlock and bad step, the states a ``max_states`` bound admits.

The coordinator only merges and numbers (about a microsecond a state); the model's code runs
in the workers.  Each worker ignores SIGINT (the coordinator, which gets Ctrl-C too, stops
it), and dies with the coordinator (``PR_SET_PDEATHSIG``, on Linux).  The coordinator stops
the workers with SIGKILL on whatever ends the search early.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import pickle
import signal
import threading
import time
import traceback
from array import array
from collections import Counter, _count_elements
from marshal import dumps as marshal_dumps
from multiprocessing.connection import wait
from operator import itemgetter
from pathlib import Path
from typing import Any

from xxhash import xxh3_64_intdigest as _xxh3

from . import bfs
from .bfs import OutOfMemory, ProgressCallback, action_text, check_state_types
from .fingerprint import marshals_directly
from .protocol import Model, ModelProtocolError, predicate_holds
from .result import Result

#: A level this wide is searched by the workers, and every level after it.
HAND_OVER_AT = 256

_first = itemgetter(0)
_second = itemgetter(1)
_step = itemgetter(0, 1)
_third = itemgetter(2)
_dumps = pickle.dumps
_PICKLE = pickle.HIGHEST_PROTOCOL


def available_cores() -> int:
    """The cores this process may run on (its affinity, which a container or ``taskset`` may
    narrow), or every core where the affinity cannot be read."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def explore(model: Model, *, workers: int = 1, hand_over_at: int = HAND_OVER_AT, **options) -> Result:
    """:func:`.bfs.explore` with ``workers`` processes: the same result, whatever their number."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers == 1 or not hasattr(os, "fork"):
        result = bfs.explore(model, **options)
        result.workers = 1
        return result
    return _ShardedSearch(model, workers, hand_over_at, **options).run()


class WorkerFailed(Exception):
    """The model's code failed in a worker: ``description`` says how and where, as the CLI
    says it of a failure in its own process."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


class WorkerLost(Exception):
    """A worker ended without saying why: killed by a signal (the kernel's out-of-memory
    killer, most often) or exited."""


def describe_failure(e: BaseException) -> str:
    """What the model's code did, with the file and line where it happened."""
    frames = traceback.extract_tb(e.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    if isinstance(e, SystemExit):
        return f"the model called sys.exit({e.code!r}){where}"
    return f"the model raised {type(e).__name__}: {e}{where}"


# ---------------------------------------------------------------- the coordinator


class _ShardedSearch(bfs.Search):
    """The one-core search until a level is wide enough; then the coordinator of the workers,
    holding the parent records, the counts and the findings as the one-core search does."""

    def __init__(self, model, workers, hand_over_at, *, max_states=None, max_depth=None, check_deadlock=True,
                 stop_on_violation=True, progress: ProgressCallback | None = None):
        super().__init__(model, max_states, max_depth, check_deadlock, stop_on_violation, progress)
        self.workers = workers
        self.hand_over_at = max(1, hand_over_at)
        self.worker_memory = 0
        self.handed_over = False

    def _run(self) -> Result:
        self.started = time.perf_counter()
        frontier = self._initial_level()
        level_seconds = [time.perf_counter() - self.started]
        left = self._levels(frontier, level_seconds, hand_over=lambda level: len(level) >= self.hand_over_at)
        if left:
            self.handed_over = True
            with _Workers(self, left) as workers:
                del left
                self._sharded_levels(workers, level_seconds)
                self.worker_memory = sum(workers.call("memory_bytes"))
        result = self._finish(level_seconds)
        result.workers = self.workers if self.handed_over else 1
        return result

    def memory_bytes(self) -> int:
        return super().memory_bytes() + self.worker_memory

    def _sharded_levels(self, workers: "_Workers", level_seconds: list[float]) -> None:
        """The levels from the one the workers adopted, admitted and checked here already.

        One call per level: each worker admits its new states of the level (as numbered
        here), checks them, and expands them, all at once, so the workers wait for each other
        once a level, not twice.  The one-core engine does not expand a level that violates an
        invariant: when the call finds one (and the search stops on one), its expansion is
        dropped, unused."""
        indices = None  # per worker, the indices of its new states of the level; None: admitted
        moves: list[tuple[int, int, int]] = []
        speeds: list[float] | None = None
        frontier_size = workers.frontier_size
        level_started = time.perf_counter()
        while frontier_size:
            found = self.bad_states or self.bad_steps or self.deadlocked is not None
            mode = None
            if self.result.stopped_by is None and not (found and self.stop_on_violation):
                mode = "probe" if self.max_depth is not None and self.depth >= self.max_depth else "expand"
            if mode is None and indices is None:
                return
            type_checked_below = self.distinct - frontier_size + max(self.type_checks_left, 0)
            invariants_to_check = [name for name in self.invariants if name not in self.bad_states]
            steps_to_check = [name for name in self.action_invariants if name not in self.bad_steps]
            find_deadlock = self.check_deadlock and self.deadlocked is None
            replies = workers.call_each("step", [
                (own, moves, type_checked_below, invariants_to_check, self.stop_on_violation, mode, steps_to_check,
                 find_deadlock) for own in (indices or [None] * self.workers)])
            if indices is not None:
                self._admitted(replies, frontier_size)
                if self.bad_states and self.stop_on_violation:
                    return
            if mode is None:
                return
            for reply in replies:
                self.generated += reply["generated"]
                self.generated_by_action.update(reply["generated_by_action"])
                if reply["deadlocked"] is not None and (self.deadlocked is None or reply["deadlocked"] < self.deadlocked):
                    self.deadlocked = reply["deadlocked"]
                for name, step in reply["bad_steps"].items():
                    if name not in self.bad_steps or step < self.bad_steps[name]:
                        self.bad_steps[name] = step
            if mode == "probe":
                if any(reply["any_new"] for reply in replies):
                    self.result.stopped_by = "max_depth"
                return
            first_new = self.distinct
            speeds = self._speeds(speeds, replies)
            indices = self._number(replies)
            moves = balance([len(own) for own in indices], speeds)
            del replies
            frontier_size = self.distinct - first_new
            if frontier_size:
                self.depth += 1
                level_seconds.append(time.perf_counter() - level_started)
                level_started = time.perf_counter()
            self._report(frontier_size)

    @staticmethod
    def _speeds(speeds: list[float] | None, replies: list[dict]) -> list[float] | None:
        """Each worker's states expanded a second, averaged over the last levels: the cores of
        a virtual machine run at speeds that differ for seconds at a time (bench/cores.py)."""
        if any(reply["expand_seconds"] <= 0.05 or not reply["expanded"] for reply in replies):
            return speeds  # too short a level to tell
        latest = [reply["expanded"] / reply["expand_seconds"] for reply in replies]
        if speeds is None:
            return latest
        return [(old + new) / 2 for old, new in zip(speeds, latest)]

    def _admitted(self, replies: list[dict], level_size: int) -> None:
        """Take the workers' findings on the level they admitted: what its states are made of,
        the actions that first reached them, the invariants they violate."""
        self.type_checks_left -= level_size
        problems = [reply["type_problem"] for reply in replies if reply["type_problem"] is not None]
        if problems:
            raise ModelProtocolError(min(problems)[1])
        for reply in replies:
            self.distinct_by_action.update(reply["distinct_by_action"])
            for name, index in reply["bad_states"].items():
                if name not in self.bad_states or index < self.bad_states[name]:
                    self.bad_states[name] = index

    def _number(self, expanded: list[dict]) -> list[array]:
        """Number the level's new states in step order, record their steps, and return each
        worker's indices, in its own order; at the ``max_states`` bound, only the first."""
        n = self.workers
        keys: list[int] = []
        for worker, reply in enumerate(expanded):
            keys += [((parent << 32) | ordinal) * n + worker for parent, ordinal in zip(reply["parents"], reply["ordinals"])]
        # Each worker's keys are sorted already: the sort merges n runs.
        keys.sort()
        if self.max_states is not None and len(keys) > self.max_states - self.distinct:
            del keys[max(self.max_states - self.distinct, 0):]
            self.result.stopped_by = "max_states"
        indices = [array("q") for _ in range(n)]
        to_worker = [own.append for own in indices]
        add_parent, add_ordinal = self.parents.append, self.ordinals.append
        index = self.distinct
        for key in keys:
            to_worker[key % n](index)
            step = key // n
            add_parent(step >> 32)
            add_ordinal(step & 0xFFFFFFFF)
            index += 1
        return indices


#: A level's states move between workers when one holds this share of the mean more than its
#: own share, and at least :data:`LEAST_MOVE` states more: a state moves for a fraction of what
#: its expansion costs, and every worker waits for the slowest at the end of each level.
IMBALANCE = 0.03
LEAST_MOVE = 32


def balance(counts: list[int], speeds: list[float] | None = None) -> list[tuple[int, int, int]]:
    """The moves (from worker, to worker, states) that share out a level's states in proportion
    to the workers' ``speeds`` (states a second; None: evenly), if they are uneven enough to be
    worth it; the states a worker gives are its last."""
    total, n = sum(counts), len(counts)
    if speeds is None or not all(speed > 0 for speed in speeds):
        speeds = [1.0] * n
    shares = [total * speed / sum(speeds) for speed in speeds]
    targets = [int(share) for share in shares]
    for worker in sorted(range(n), key=lambda w: targets[w] - shares[w])[: total - sum(targets)]:
        targets[worker] += 1
    if max(c - t for c, t in zip(counts, targets)) < max(LEAST_MOVE, IMBALANCE * total / n):
        return []
    givers = [[worker, c - t] for worker, (c, t) in enumerate(zip(counts, targets)) if c > t]
    takers = [[worker, t - c] for worker, (c, t) in enumerate(zip(counts, targets)) if c < t]
    moves = []
    while givers and takers:
        giver, taker = givers[-1], takers[-1]
        count = min(giver[1], taker[1])
        moves.append((giver[0], taker[0], count))
        giver[1] -= count
        taker[1] -= count
        if not giver[1]:
            givers.pop()
        if not taker[1]:
            takers.pop()
    return moves


class _Workers:
    """The worker processes, started by fork from the coordinator, which they inherit."""

    def __init__(self, search: _ShardedSearch, frontier: list):
        self.search = search
        self.n = search.workers
        context = multiprocessing.get_context("fork")
        # one pipe each way between the coordinator and each worker; one pipe per ordered pair
        # of workers
        self.links = [context.Pipe() for _ in range(self.n)]
        peer_pipes = {(a, b): context.Pipe(duplex=False) for a in range(self.n) for b in range(self.n) if a != b}
        first_index = search.distinct - len(frontier)
        self.processes = []
        try:
            for worker in range(self.n):
                inbox = {peer: peer_pipes[(peer, worker)][0] for peer in range(self.n) if peer != worker}
                outbox = {peer: peer_pipes[(worker, peer)][1] for peer in range(self.n) if peer != worker}
                process = context.Process(
                    target=_worker_main, name=f"kraftcheck-worker-{worker}", daemon=True,
                    args=(search, frontier, first_index, worker, self.links[worker][1], inbox, outbox))
                process.start()
                self.processes.append(process)
        except BaseException:
            self.stop()
            raise
        finally:
            for reader, writer in peer_pipes.values():
                reader.close()
                writer.close()
            for _, theirs in self.links:
                theirs.close()
        self.frontier_size = len(frontier)
        # The workers hold the visited fingerprints from here on.
        search.visited = set()
        gc.collect()

    def __enter__(self) -> "_Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def call(self, method: str, *args) -> list:
        return self.call_each(method, [args] * self.n)

    def call_each(self, method: str, args: list) -> list:
        """Ask every worker to run ``method`` with its own arguments; their replies, in order."""
        for (ours, _), own in zip(self.links, args):
            ours.send((method, own))
        replies: list = [None] * self.n
        waiting = {ours: worker for worker, (ours, _) in enumerate(self.links)}
        sentinels = {process.sentinel: worker for worker, process in enumerate(self.processes)}
        while waiting:
            for ready in wait(list(waiting) + list(sentinels)):
                if ready in waiting:
                    worker = waiting.pop(ready)
                    try:
                        reply = ready.recv()
                    except (EOFError, OSError):
                        self._lost(worker)
                    if isinstance(reply, _Failure):  # the others may wait on it in an exchange: stop now
                        reply.raise_it(self.search.distinct)
                    replies[worker] = reply
                elif ready in sentinels:
                    worker = sentinels.pop(ready)
                    if worker in waiting.values():
                        self._lost(worker)
        return replies

    def _lost(self, worker: int):
        process = self.processes[worker]
        process.join(timeout=1)
        code = process.exitcode
        how = (f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0
               else f"exited with code {code}" if code is not None else "stopped answering")
        hint = " (the kernel's out-of-memory killer, if nobody else sent it)" if code == -signal.SIGKILL else ""
        raise WorkerLost(f"worker {worker} of the search (pid {process.pid}) {how}{hint} after "
                         f"{self.search.distinct:,} distinct states")

    def stop(self) -> None:
        """Stop every worker at once (SIGKILL: a worker holds nothing worth a clean end) and reap it."""
        for process in self.processes:
            if process.exitcode is None:
                try:
                    os.kill(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for process in self.processes:
            process.join()
        for ours, _ in self.links:
            ours.close()
        self.processes = []


class _Failure:
    """What stopped a worker's part of a call, sent back to the coordinator."""

    def __init__(self, kind: str, text: str):
        self.kind, self.text = kind, text

    def raise_it(self, distinct: int):
        if self.kind == "memory":
            raise OutOfMemory(distinct)
        if self.kind == "protocol":
            raise ModelProtocolError(self.text)
        raise WorkerFailed(self.text)


# ---------------------------------------------------------------- a worker


def _worker_main(search, frontier, first_index, me, link, inbox, outbox) -> None:
    # Ctrl-C reaches every process of the terminal's group: the coordinator handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    die_with_parent()
    shard = _Shard(search, me, inbox, outbox)
    shard.adopt(search.visited, frontier, first_index)
    del search, frontier
    while True:
        try:
            method, args = link.recv()
        except (EOFError, OSError):
            return
        try:
            reply = getattr(shard, method)(*args)
        except MemoryError:
            reply = _Failure("memory", "")
        except ModelProtocolError as e:
            reply = _Failure("protocol", str(e))
        except BaseException as e:  # the model's code: sys.exit() too
            reply = _Failure("model", describe_failure(e))
        link.send(reply)


def die_with_parent() -> None:
    """Have the kernel kill this process when the coordinator dies, however it dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the coordinator was already gone
        os._exit(1)


class _Shard:
    """A worker's part of the search: the fingerprints it owns, and its states of the level."""

    def __init__(self, search: _ShardedSearch, me: int, inbox: dict, outbox: dict):
        self.model = search.model
        self.me, self.n = me, search.workers
        self.canonical = search.canonical
        self.fingerprint = search.fingerprint
        self.invariants = search.invariants
        self.action_invariants = search.action_invariants
        self.inbox, self.outbox = inbox, outbox
        self.visited: set[int] = set()
        self.frontier: list = []
        self.indices = array("q")
        # the level's new states, in step order, until the coordinator numbers them
        self.pending: list = []

    def adopt(self, visited: set[int], frontier: list, first_index: int) -> None:
        n, me = self.n, self.me
        self.visited = {fp for fp in visited if fp % n == me}
        fingerprint = self.fingerprint
        for position, state in enumerate(frontier):
            if fingerprint(state) % n == me:
                self.frontier.append(state)
                self.indices.append(first_index + position)

    def memory_bytes(self) -> int:
        return self.visited.__sizeof__() + len(self.visited) * (2**63).__sizeof__()

    # ------------------------------------------------------------ a level's expansion

    def _expand(self, probing: bool, steps_to_check: list[str], find_deadlock: bool, frontier: list) -> dict:
        n, me = self.n, self.me
        successors = self.model.successors
        fingerprint = self.fingerprint
        indices = self.indices
        inline = self.canonical is None and bool(frontier) and marshals_directly(frontier[0])
        visited = self.visited
        step_properties = {name: self.action_invariants[name] for name in steps_to_check} if not probing else {}
        bad_steps: dict[str, tuple[int, int]] = {}
        deadlocked = None
        generated = 0
        generated_by_action: Counter = Counter()
        # fingerprint -> (parent, ordinal, (action, state)): the least step to each successor,
        # since states are expanded in index order and each one's successors in order
        boxes: list[dict] = [{} for _ in range(n)]
        mine = boxes[me]
        started = time.perf_counter()
        for position, state in enumerate(frontier):
            succ = list(successors(state))
            parent = indices[position]
            if not succ:
                if find_deadlock and deadlocked is None:
                    deadlocked = parent
                continue
            generated += len(succ)
            _count_elements(generated_by_action, map(_first, succ))
            if step_properties:
                self._check_steps(state, succ, parent, step_properties, bad_steps)
            ordinal = 0
            for step in succ:
                target = step[1]
                fp = _xxh3(marshal_dumps(target, 2)) if inline else fingerprint(target)
                box = boxes[fp % n]
                if fp not in box and (box is not mine or fp not in visited):
                    box[fp] = (parent, ordinal, step)
                ordinal += 1
        reply = {"generated": generated, "generated_by_action": generated_by_action, "deadlocked": deadlocked,
                 "bad_steps": bad_steps, "expanded": len(frontier), "expand_seconds": time.perf_counter() - started}
        if probing:
            offered = self._exchange({peer: _dumps(array("Q", boxes[peer]), _PICKLE) for peer in self.outbox})
            reply["any_new"] = bool(mine) or any(
                fp not in visited for data in offered.values() for fp in pickle.loads(data))
            return reply
        self.frontier, self.indices = [], array("q")
        reply["parents"], reply["ordinals"] = self._settle(boxes)
        return reply

    def _check_steps(self, state, succ, parent, properties, bad_steps) -> None:
        for name, holds in properties.items():
            if name in bad_steps:
                continue
            for ordinal, (action, target) in enumerate(succ):
                verdict = holds(state, action, target)
                if not verdict and not predicate_holds("step property", name, verdict):
                    bad_steps[name] = (parent, ordinal)
                    break

    def _settle(self, boxes: list[dict]) -> tuple[array, array]:
        """Offer the successors to their owners; as an owner, take the least step to each new
        fingerprint of ours, and tell the worker that holds its state.  The states stay where
        they were generated: the worker holding a new state admits and expands it (unless the
        coordinator moves it to even out the level).  The steps of our new states, in order."""
        me, visited = self.me, self.visited
        mine = boxes[me]
        offers = {}
        for peer in self.outbox:
            box = boxes[peer]
            candidates = box.values()
            offers[peer] = _dumps((array("Q", box), array("q", map(_first, candidates)),
                                   array("I", map(_second, candidates))), _PICKLE)
        offered = self._exchange(offers)
        # fingerprint of ours -> (parent, ordinal, worker that holds the state), where a
        # peer's step is less than any of ours
        theirs: dict[int, tuple[int, int, int]] = {}
        for peer, data in offered.items():
            fps, parents, ordinals = pickle.loads(data)
            for fp, parent, ordinal in zip(fps, parents, ordinals):
                if fp in visited:
                    continue
                known = theirs.get(fp) or mine.get(fp)
                if known is None or (parent, ordinal) < (known[0], known[1]):
                    theirs[fp] = (parent, ordinal, peer)
        visited.update(mine)
        visited.update(theirs)
        accepted: dict[int, array] = {peer: array("Q") for peer in self.outbox}
        for fp, (_, _, holder) in theirs.items():
            accepted[holder].append(fp)
        taken = self._exchange({peer: _dumps(fps, _PICKLE) for peer, fps in accepted.items()})
        new = [candidate for fp, candidate in mine.items() if fp not in theirs]
        for peer, data in taken.items():
            box = boxes[peer]
            new += [box[fp] for fp in pickle.loads(data)]
        new.sort(key=_step)
        self.pending = new
        return array("q", map(_first, new)), array("I", map(_second, new))

    def _exchange(self, outgoing: dict[int, bytes]) -> dict[int, bytes]:
        """Send each peer its message and receive each peer's, at the same time."""
        order = sorted(outgoing, key=lambda peer: (peer - self.me) % self.n)

        def send_all():
            for peer in order:
                self.outbox[peer].send_bytes(outgoing[peer])

        sender = threading.Thread(target=send_all, daemon=True)
        sender.start()
        received = {}
        waiting = {conn: peer for peer, conn in self.inbox.items()}
        while waiting:
            for conn in wait(list(waiting)):
                received[waiting.pop(conn)] = conn.recv_bytes()
        sender.join()
        return received

    # ------------------------------------------------------------ a level's admission

    def step(self, own_indices, moves, type_checked_below, invariants_to_check, stop_on_violation, mode,
             steps_to_check, find_deadlock) -> dict:
        """Admit the level's new states numbered ``own_indices`` (None: the frontier is admitted
        already), after the ``moves`` that even the level out, and check them; then expand or
        probe them, as ``mode`` says.  A worker whose states stop the search (a state not made
        of what states are made of, or a violated invariant when the search stops on one)
        expands none, but it takes its part in the exchanges all the same: the others wait for
        it."""
        reply: dict[str, Any] = {}
        stopping = False
        if own_indices is not None:
            reply.update(self._admit(own_indices, moves, type_checked_below, invariants_to_check))
            stopping = reply["type_problem"] is not None or bool(reply["bad_states"] and stop_on_violation)
        if mode is not None:
            reply.update(self._expand(mode == "probe", steps_to_check, find_deadlock, [] if stopping else self.frontier))
        return reply

    def _admit(self, own_indices: array, moves, type_checked_below: int, invariants_to_check: list[str]) -> dict:
        pending, self.pending = self.pending, []
        # Past a max_states bound: dropped here, while their fingerprints stay in their owners'
        # visited sets; the search stops at this level.
        del pending[len(own_indices):]
        reply: dict[str, Any] = {"distinct_by_action": Counter(step[0] for _, _, step in pending), "bad_states": {}}
        steps = list(map(_third, pending))
        del pending
        indices = own_indices
        if moves:
            steps, indices = self._move(steps, indices, moves)
        self.frontier = [state for _, state in steps]
        self.indices = indices
        reply["type_problem"] = self._type_problem(steps, indices, type_checked_below)
        if reply["type_problem"] is not None:
            return reply
        for name in invariants_to_check:
            verdicts = list(map(self.invariants[name], self.frontier))
            if not all(verdicts):
                first_false = next(i for i, v in enumerate(verdicts) if not predicate_holds("invariant", name, v))
                reply["bad_states"][name] = indices[first_false]
        return reply

    def _move(self, steps: list, indices: array, moves) -> tuple[list, array]:
        """Give and take the states the coordinator moves; ours and theirs, in index order."""
        outgoing: dict[int, list] = {peer: [] for peer in self.outbox}
        for giver, taker, count in moves:
            if giver == self.me:
                cut = len(steps) - count
                outgoing[taker] = list(zip(indices[cut:], steps[cut:]))
                del steps[cut:], indices[cut:]
        received = self._exchange({peer: _dumps(given, _PICKLE) for peer, given in outgoing.items()})
        taken = [moved for data in received.values() for moved in pickle.loads(data)]
        if not taken:
            return steps, indices
        merged = sorted([*zip(indices, steps), *taken], key=_first)
        return list(map(_second, merged)), array("q", map(_first, merged))

    def _type_problem(self, steps, indices, checked_below) -> tuple[int, str] | None:
        """(index, message) of the first new state that is not made of what states are made
        of, as the one-core engine checks them: in full for the first states of the search,
        by hashing for the rest, and in full again when one does not hash."""
        def first_problem(positions):
            for position in positions:
                action, state = steps[position]
                try:
                    check_state_types(state, self.canonical, f"the state {action_text(action)} led to")
                except ModelProtocolError as e:
                    return indices[position], str(e)
            return None

        problem = first_problem(i for i in range(len(steps)) if indices[i] < checked_below)
        if problem is not None:
            return problem
        try:
            for _, state in steps:
                hash(state)
        except TypeError:
            return first_problem(range(len(steps)))
        return None

