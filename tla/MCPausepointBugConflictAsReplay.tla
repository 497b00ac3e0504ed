-------------------- MODULE MCPausepointBugConflictAsReplay --------------------
(* Seeded design bug conflict_as_replay: a different response reported as a replay. TLC must report a violation of ReplayEqualsFirst; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
