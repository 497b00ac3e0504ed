-------------------- MODULE MCPausepointBugReplayRecounts --------------------
(* Seeded design bug replay_recounts: a replay is counted as a consume. TLC must report a violation of AtMostOnceConsumption; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
