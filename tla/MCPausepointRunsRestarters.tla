-------------------- MODULE MCPausepointRunsRestarters --------------------
(* TLC only: two servers and two restarters over one run (a question, then a side effect) -- concurrent restarts (run.restart.concurrent), a crash, a store failure, a live owner's lease running out, a cancel racing the effect, late and repeated continuations; liveness under fairness. *)
EXTENDS PausepointRuns

MCScripts == << <<"ask", "effect", "end">> >>

MCParents == <<0>>

============================================================
