-------------------- MODULE MCPausepointRunsBugRecoveryDuplicates --------------------
(* Seeded design bug recovery_duplicates (issue 8, failure 5): a restart opens a new recovery pause beside a live one (orphan after a crash between opening and marking). TLC must report a violation of OneRecoveryPausePerEffect; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"effect", "end">> >>

MCParents == <<0>>

============================================================
