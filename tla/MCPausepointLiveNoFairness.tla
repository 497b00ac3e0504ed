-------------------- MODULE MCPausepointLiveNoFairness --------------------
(* The liveness check is not vacuous: MCPausepointLive's constants with Spec
   instead of LiveSpec (no fairness on the clock or on expiry).  TLC must find
   a behaviour in which a due pause is never settled (it stutters), violating
   EveryPauseSettles. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q1">>], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

============================================================
