-------------------- MODULE MCPausepointBugDemoteOnFailedWrite --------------------
(* Seeded design bug demote_on_failed_write: a failed rewrite demotes a resumable pause to paused. TLC must report a violation of OnlyTableTransitions; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
