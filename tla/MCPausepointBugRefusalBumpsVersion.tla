-------------------- MODULE MCPausepointBugRefusalBumpsVersion --------------------
(* Seeded design bug refusal_bumps_version: a refused resume writes the row. TLC must report a violation of RefusalChangesNothing; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
