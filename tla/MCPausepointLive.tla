-------------------- MODULE MCPausepointLive --------------------
(* Exhaustive with liveness, in lockstep in CI: one question answered yes or no (replay and conflict), a clock with three values (0, 1 = the expiry, 2). Under weak fairness of the clock, expiry and continuation every due pause settles and every answered run continues. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
