-------------------- MODULE MCPausepointRunsBugUnfencedProgress --------------------
(* Seeded design bug unfenced_progress (issue 8, failure 3): the driver's write after an effect is unconditional (a cancel in flight is undone). TLC must report a violation of RunStatusForward; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"effect", "effect", "end">> >>

MCParents == <<0>>

============================================================
