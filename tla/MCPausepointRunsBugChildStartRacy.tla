-------------------- MODULE MCPausepointRunsBugChildStartRacy --------------------
(* Seeded design bug child_start_racy (issue 8, failure 4): a child's start reads its parent's status, then creates the run (it escapes the parent's cancel). TLC must report a violation of ChildCancelledWithParent; runmodel.py with the same bug fails the same property (tests/test_model_bugs.py). *)
EXTENDS PausepointRuns

MCScripts == << <<"ask", "end">>, <<"effect", "end">> >>

MCParents == <<0, 1>>

============================================================
