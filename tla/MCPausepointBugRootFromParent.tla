-------------------- MODULE MCPausepointBugRootFromParent --------------------
(* Seeded design bug root_from_parent: a token's root run taken from the parent, not the root. TLC must report a violation of TokenBoundToRunAndRoot; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "end"] >>,
     << [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0, 1, 2>>

============================================================
