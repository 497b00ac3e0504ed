-------------------- MODULE MCPausepointRunsTree --------------------
(* The run level with a child run, in lockstep with runmodel.py in CI: two servers and one restarter, a parent that asks and a child with a side effect; the child's start races the parent's cancel, the cancel races the child's effect, a crash; liveness under fairness. *)
EXTENDS PausepointRuns

MCScripts == << <<"ask", "end">>, <<"effect", "end">> >>

MCParents == <<0, 1>>

============================================================
