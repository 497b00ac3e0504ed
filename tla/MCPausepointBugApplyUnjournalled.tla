-------------------- MODULE MCPausepointBugApplyUnjournalled --------------------
(* Seeded design bug apply_unjournalled: an effect runs before it is journalled. TLC must report a violation of EffectJournalBracket; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
