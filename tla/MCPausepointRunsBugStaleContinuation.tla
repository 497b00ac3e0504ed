-------------------- MODULE MCPausepointRunsBugStaleContinuation --------------------
(* Seeded design bug stale_continuation (issue 8, failure 1): a continuation does not check that its pause belongs to the run's current step (approval bypass). TLC must report a violation of RunContinuesOnlyWhenAnswered; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"ask", "ask", "effect", "end">> >>

MCParents == <<0>>

============================================================
