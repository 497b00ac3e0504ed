-------------------- MODULE MCPausepointBugVersion --------------------
(* Seeded design bug no_version_check: resume commit without the conditional version check. TLC must report a violation of OneWinner; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
