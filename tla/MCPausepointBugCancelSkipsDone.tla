-------------------- MODULE MCPausepointBugCancelSkipsDone --------------------
(* Seeded design bug cancel_skips_done: cancel stops at a done run, not reaching its children. TLC must report a violation of CancelPropagated; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >>,
     << [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"x">>], [kind |-> "end"] >> >>

MCParents == <<0, 1, 2>>

============================================================
