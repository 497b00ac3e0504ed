-------------------- MODULE MCPausepointBugBindingUnchecked --------------------
(* Seeded design bug binding_unchecked: resume without the run/root/session/scope binding checks. TLC must report a violation of ConsumedOnlyWithMatchingBinding; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
