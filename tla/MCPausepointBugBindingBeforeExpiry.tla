-------------------- MODULE MCPausepointBugBindingBeforeExpiry --------------------
(* Seeded design bug binding_before_expiry: the binding is checked before the expiry. TLC must report a violation of RefusalOrder; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
