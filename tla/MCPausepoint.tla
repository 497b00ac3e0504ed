-------------------- MODULE MCPausepoint --------------------
(* Exhaustive model: a parent run that asks two questions at once (two pause
   points answered independently) and a child run with one side effect that a
   crash can cut off (unknown outcome -> recovery pause), two resume servers
   racing on every pause, a clock that expires pauses, one crash, and cancel
   propagating from parent to child.  One response, so conflicting answers are
   left to MCPausepointLive.  Its reachable state set is recorded in
   results/MCPausepoint.states.gz and must equal model.py's (lockstep). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >>,
     << [kind |-> "effect", key |-> "a"], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

============================================================
