-------------------- MODULE MCPausepointBugFailedWriteResumable --------------------
(* Seeded design bug failed_write_resumable: a failed turn write still records the turn. TLC must report a violation of TurnRecordedOnlyByWrite; model.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================
