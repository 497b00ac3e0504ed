-------------------- MODULE MCPausepointBugAnswerAllSiblings --------------------
(* Seeded design bug answer_all_siblings: an answer consumes the other resumable pauses of its step. TLC must report a violation of MultiIndependent; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
