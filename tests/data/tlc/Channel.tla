------------------------------ MODULE Channel ------------------------------
(* A sender numbers messages into a lossy bag; the receiver keeps the highest *)
(* number seen.  The captured TLC outputs beside this module test the parser  *)
(* in checker/tlc.py; Bug puts a fault back so that TLC reports a violation.  *)
EXTENDS Naturals, Bags

CONSTANTS Max, Bug

VARIABLES sent, received, network

vars == <<sent, received, network>>

BagAdd(B, m) == B (+) SetToBag({m})
BagRemove(B, m) == B (-) SetToBag({m})

Init == sent = 0 /\ received = 0 /\ network = EmptyBag

Send ==
    /\ sent < Max
    /\ sent' = sent + 1
    /\ network' = BagAdd(network, sent + 1)
    /\ UNCHANGED received

Receive(m) ==
    /\ received' = CASE Bug = "overshoot" -> m + 1
                     [] Bug = "rewind" -> m - 1
                     [] OTHER -> IF m > received THEN m ELSE received
    /\ network' = BagRemove(network, m)
    /\ UNCHANGED sent

Lose(m) ==
    /\ network' = BagRemove(network, m)
    /\ UNCHANGED <<sent, received>>

Next ==
    \/ Send
    \/ \E m \in BagToSet(network) : Receive(m)
    \/ \E m \in BagToSet(network) : Lose(m)

ReceivedOnlySent == received <= sent

NeverBackwards == received' >= received
NeverBackwardsProp == [][NeverBackwards]_vars
=============================================================================
