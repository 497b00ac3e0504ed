-------------------- MODULE MCPausepointBugCancelDoneRun --------------------
(* Seeded design bug cancel_done_run: cancel marks a done run cancelled. TLC must report a violation of RunTerminalAbsorbing; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >>,
     << [kind |-> "end"] >> >>

MCParents == <<0, 1>>

============================================================
