-------------------- MODULE MCPausepointLiveNoFairness --------------------
(* MCPausepointLive without fairness: the liveness properties must fail (a due pause is never settled). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
