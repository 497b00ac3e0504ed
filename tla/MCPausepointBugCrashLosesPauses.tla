-------------------- MODULE MCPausepointBugCrashLosesPauses --------------------
(* Seeded design bug crash_loses_pauses: a crash expires the live pauses. TLC must report a violation of PausesSurviveCrash; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
