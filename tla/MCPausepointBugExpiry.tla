-------------------- MODULE MCPausepointBugExpiry --------------------
(* Seeded design bug no_expiry_check: resume without the expiry check. TLC must report a violation of NoConsumeAtOrAfterExpiry; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
