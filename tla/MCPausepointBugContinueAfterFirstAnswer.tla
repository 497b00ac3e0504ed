-------------------- MODULE MCPausepointBugContinueAfterFirstAnswer --------------------
(* Seeded design bug continue_after_first_answer: a multi-question step continues after its first answer. TLC must report a violation of ContinuesOnlyWhenAllAnswered; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
