-------------------- MODULE MCPausepointBugPauseIgnoresCancel --------------------
(* Seeded design bug pause_ignores_cancel: pause() does not check the run's status during a cancel. TLC must report a violation of NoPauseWhileCancelling; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
