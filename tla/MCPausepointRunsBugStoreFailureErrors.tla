-------------------- MODULE MCPausepointRunsBugStoreFailureErrors --------------------
(* Seeded design bug store_failure_errors (issue 8, failure 6): a store failure ends the run in error instead of releasing it (dead run). TLC must report a violation of RunningRunMovesOn; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"effect", "end">> >>

MCParents == <<0>>

============================================================
