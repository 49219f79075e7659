---------------------------- MODULE LossyWire ----------------------------
(* tests/models.py's Channel: a message sent again and again over a wire that *)
(* may lose it, until it is delivered.                                         *)
VARIABLES sender, wire
vars == <<sender, wire>>

Init == sender = "idle" /\ wire = FALSE
Send == sender # "done" /\ ~wire /\ wire' = TRUE /\ UNCHANGED sender
Lose == sender # "done" /\ wire /\ wire' = FALSE /\ UNCHANGED sender
Deliver == sender # "done" /\ wire /\ sender' = "done" /\ wire' = FALSE
Next == Send \/ Lose \/ Deliver

\* fairness = none, weak and strong
NoneSpec == Init /\ [][Next]_vars
WeakSpec == NoneSpec /\ WF_vars(Send) /\ WF_vars(Deliver)
StrongSpec == NoneSpec /\ WF_vars(Send) /\ SF_vars(Deliver)

Done == sender = "done"
Quiet == ~wire
OnWire == wire
Delivered == []<>Done
Settles == <>[]Quiet
SentLeadsToDone == OnWire ~> Done
=============================================================================
