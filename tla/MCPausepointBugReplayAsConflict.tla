-------------------- MODULE MCPausepointBugReplayAsConflict --------------------
(* Seeded design bug replay_as_conflict: the same response reported as a conflict. TLC must report a violation of ConflictIsDifferent; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
