-------------------- MODULE MCPausepointBugCancelToldExpired --------------------
(* Seeded design bug cancel_told_expired: a resume of a cancelled pause is told pause_expired. TLC must report a violation of LoserToldWhoWon; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
