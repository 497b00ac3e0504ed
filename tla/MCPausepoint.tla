-------------------- MODULE MCPausepoint --------------------
(* Main exhaustive model, in lockstep with model.py in CI: one run with a side effect then a question, two resume servers racing on its pause, a clock around the expiry, one crash (inside the effect: unknown outcome and its recovery pause), a failed turn write, mark-unknown and reconcile on the live pause, the cancel loop. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
