---------------------------- MODULE Lock ----------------------------
(* The lock of kraftcheck/examples/lock.py, action for action: N processes go  *)
(* idle -> waiting -> critical -> idle; holder is -1 where Python has None.    *)
EXTENDS Integers, FiniteSets

CONSTANT N
Procs == 0 .. (N - 1)
VARIABLES pc, holder
vars == <<pc, holder>>

Init == pc = [p \in Procs |-> "idle"] /\ holder = -1

Request(p) == pc[p] = "idle" /\ pc' = [pc EXCEPT ![p] = "waiting"] /\ UNCHANGED holder
Acquire(p) == pc[p] = "waiting" /\ holder = -1 /\ pc' = [pc EXCEPT ![p] = "critical"] /\ holder' = p
Release(p) == pc[p] = "critical" /\ pc' = [pc EXCEPT ![p] = "idle"] /\ holder' = -1

Next == \E p \in Procs : Request(p) \/ Acquire(p) \/ Release(p)

\* fairness = weak (the default) and fairness = strong
WeakSpec == Init /\ [][Next]_vars /\ \A p \in Procs : WF_vars(Acquire(p)) /\ WF_vars(Release(p))
StrongSpec == Init /\ [][Next]_vars /\ \A p \in Procs : SF_vars(Acquire(p)) /\ WF_vars(Release(p))

MutualExclusion == Cardinality({p \in Procs : pc[p] = "critical"}) <= 1
ReleasesTheLock == (pc[0] = "critical") ~> (pc[0] = "idle")
NoStarvation == (pc[0] = "waiting") ~> (pc[0] = "critical")
=============================================================================
