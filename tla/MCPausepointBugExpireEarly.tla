-------------------- MODULE MCPausepointBugExpireEarly --------------------
(* Seeded design bug expire_early: a pause expires one tick before its time. TLC must report a violation of ExpiredOnlyWhenDue; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
