-------------------- MODULE MCPausepointBugMintResumable --------------------
(* Seeded design bug mint_resumable: a pause minted resumable, its turn flag set in the same step. TLC must report a violation of TurnWrittenSeparately; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
