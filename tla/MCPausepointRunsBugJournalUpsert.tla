-------------------- MODULE MCPausepointRunsBugJournalUpsert --------------------
(* Seeded design bug journal_upsert (issue 8, failure 2): the effect journal's start is a read then an upsert, not a conditional insert under the epoch (doubled effects beside a live driver). TLC must report a violation of RunEffectsAtMostOnce; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"effect", "end">> >>

MCParents == <<0>>

============================================================
