-------------------- MODULE MCPausepointLive --------------------
(* Exhaustive model with liveness: a parent run with an effect and an ask, a
   child run with an ask, one resume server answering "yes" or "no" (so a
   second answer can replay or conflict), expiry, one crash, cancel.  Checks
   the invariants and, under weak fairness of the clock and of expiry, that
   every pause due within the horizon is eventually consumed, expired or
   cancelled (EveryPauseSettles).  Also in lockstep with model.py. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q1">>], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

============================================================
