"""Two-phase commit (Gray and Lamport's ``TwoPhase``): a transaction manager and N resource
managers agree to commit or abort a transaction, through messages that stay in a set.

    kraftcheck check --model kraftcheck.examples.twophase:make_model --no-deadlock

With 3 resource managers the protocol reaches 288 states, as TLC counts ``TwoPhase``, and
``TCConsistent`` holds in each.  Every run ends with each manager committed or aborted and
nothing left to do: a terminating protocol, so ``--no-deadlock`` (or ``deadlock = false`` in a
config) says that states without successors are expected.  ``--set mutant=commit_early`` lets
the manager commit before every resource manager is prepared; kraftcheck finds the run where
one commits while another aborts.

The state is ``(rm_states, tm_state, tm_prepared, msgs)``: a tuple of each resource manager's
state, the manager's, the set of resource managers it knows prepared, and the set of messages
sent.  Sets are frozensets, fingerprinted the same however they were built.
"""

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
INIT, DONE = "init", "done"


class TwoPhase:
    actions = ["TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg",
               "RMRcvAbortMsg"]
    mutants = {"commit_early": "the manager commits as soon as one resource manager is prepared"}

    def __init__(self, resource_managers: int = 3, mutant: str = "none"):
        if mutant not in ("none", *self.mutants):
            raise ValueError(f"unknown mutant {mutant!r} (known: {', '.join(self.mutants)})")
        self.rms = tuple(range(resource_managers))
        self.mutant = mutant
        self.invariants = {"TCConsistent": self.TCConsistent}

    def TCConsistent(self, state) -> bool:
        """No resource manager has committed while another has aborted."""
        rm_states = state[0]
        return not (COMMITTED in rm_states and ABORTED in rm_states)

    def init_states(self):
        return [((WORKING,) * len(self.rms), INIT, frozenset(), frozenset())]

    def successors(self, state):
        rm_states, tm, prepared, msgs = state
        for rm in self.rms:
            if tm == INIT and ("Prepared", rm) in msgs and rm not in prepared:
                yield ("TMRcvPrepared", rm), (rm_states, tm, prepared | {rm}, msgs)
        everyone = len(prepared) == len(self.rms) or (self.mutant == "commit_early" and prepared)
        if tm == INIT and everyone:
            yield "TMCommit", (rm_states, DONE, prepared, msgs | {("Commit",)})
        if tm == INIT:
            yield "TMAbort", (rm_states, DONE, prepared, msgs | {("Abort",)})
        for rm in self.rms:
            if rm_states[rm] == WORKING:
                yield ("RMPrepare", rm), (self._set(rm_states, rm, PREPARED), tm, prepared, msgs | {("Prepared", rm)})
                yield ("RMChooseToAbort", rm), (self._set(rm_states, rm, ABORTED), tm, prepared, msgs)
            if ("Commit",) in msgs and rm_states[rm] != COMMITTED:
                yield ("RMRcvCommitMsg", rm), (self._set(rm_states, rm, COMMITTED), tm, prepared, msgs)
            if ("Abort",) in msgs and rm_states[rm] != ABORTED:
                yield ("RMRcvAbortMsg", rm), (self._set(rm_states, rm, ABORTED), tm, prepared, msgs)

    @staticmethod
    def _set(rm_states, rm, value):
        return rm_states[:rm] + (value,) + rm_states[rm + 1:]

    def TMRcvPrepared(self):
        """The manager learns from its message that a resource manager is prepared."""

    def TMCommit(self):
        """The manager commits, every resource manager being prepared, and says so."""

    def TMAbort(self):
        """The manager aborts (at any time before it decided), and says so."""

    def RMPrepare(self):
        """A working resource manager prepares and tells the manager."""

    def RMChooseToAbort(self):
        """A working resource manager aborts on its own."""

    def RMRcvCommitMsg(self):
        """A resource manager commits on the manager's word."""

    def RMRcvAbortMsg(self):
        """A resource manager aborts on the manager's word."""

    def describe(self, state):
        """The variables as traces show them, named as in TLA+'s TwoPhase."""
        rm_states, tm, prepared, msgs = state
        return {"rmState": rm_states, "tmState": tm, "tmPrepared": prepared, "msgs": msgs}


def make_model(settings: dict):
    """The factory ``--model`` names: a config's ``[model]`` table (or ``--set``) comes in as ``settings``."""
    unknown = sorted(set(settings) - {"resource_managers", "mutant"})
    if unknown:
        raise ValueError(f"unknown model setting {unknown[0]!r} (known: resource_managers, mutant)")
    return TwoPhase(**settings)
