-------------------- MODULE MCPausepointBugVersion --------------------
(* A seeded bug, to show the checks bite: the resume commit without the
   conditional version check (resume.consume.single-winner) -- a resumer
   that read a resumable row consumes it even though another resumer
   consumed it in between.  TLC must report a violation of
   AtMostOnceConsumption (resume.consume.at-most-once); the same bug in
   model.py fails the Python invariant check (tests/test_model_bugs.py).
   Constants of MCPausepoint (two resumers). *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "ask", names |-> <<"q1", "q2">>], [kind |-> "end"] >>,
     << [kind |-> "effect", key |-> "a"], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

\* ResumeCommit deciding on what was read, with no version comparison
ResumeCommitNoVersionCheck(i) ==
    LET res == resumers[i]
        run == runs[res.run]
        slot == run.slots[res.slot]
    IN /\ res.phase = "read"
       /\ resumers' = [resumers EXCEPT ![i] = IdleResumer]
       /\ IF ResumeResult(res.seen, now, res.response) = "consumed"
          THEN runs' = [runs EXCEPT ![res.run] =
                          ContinueAfter(
                            WithSlot(run, res.slot,
                              [slot EXCEPT !.state = LcConsume(res.seen, now, res.response),
                                           !.version = @ + 1, !.consumes = @ + 1]),
                            res.slot)]
          ELSE UNCHANGED runs
       /\ UNCHANGED <<now, crashes>>
============================================================
