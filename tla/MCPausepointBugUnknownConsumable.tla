-------------------- MODULE MCPausepointBugUnknownConsumable --------------------
(* Seeded design bug unknown_consumable: a pause in unknown_outcome is consumed. TLC must report a violation of UnknownNeverConsumed; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
