-------------------- MODULE MCPausepointRuns --------------------
(* The run level's main model, in lockstep with runmodel.py in CI: two servers and one restarter drive one run (a question, then a side effect) -- a crash, a store failure, a live owner's lease running out, a cancel racing the effect, late and repeated continuations; liveness (RunningRunMovesOn) under fairness. *)
EXTENDS PausepointRuns

MCScripts == << <<"ask", "effect", "end">> >>

MCParents == <<0>>

============================================================
