-------------------- MODULE MCPausepointBugReconcileGuess --------------------
(* Seeded design bug reconcile_guess: reconcile may say applied when it was not. TLC must report a violation of ReconcileTruthful; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
