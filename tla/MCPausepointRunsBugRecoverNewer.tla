-------------------- MODULE MCPausepointRunsBugRecoverNewer --------------------
(* Seeded design bug recover_newer (issue 8, failure 5): a driver opens a recovery pause for any started effect, also a newer owner's in-flight one. TLC must report a violation of NoRecoveryBesideLiveEffect; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"effect", "end">> >>

MCParents == <<0>>

============================================================
