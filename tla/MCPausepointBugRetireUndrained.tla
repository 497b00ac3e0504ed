-------------------- MODULE MCPausepointBugRetireUndrained --------------------
(* Seeded design bug retire_undrained: a key retired without the drain proof. TLC must report a violation of RetiredKeyDrained; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
