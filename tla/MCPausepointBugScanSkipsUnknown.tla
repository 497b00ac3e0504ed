-------------------- MODULE MCPausepointBugScanSkipsUnknown --------------------
(* Seeded design bug scan_skips_unknown: the cancel loop skips pauses in unknown_outcome. TLC must report a violation of CancelledRunHasNoLivePause; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
