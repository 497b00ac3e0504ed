-------------------- MODULE MCPausepointBugExpiry --------------------
(* A seeded bug, to show the checks bite: resume without the expiry check
   (resume.expiry) -- a pause answered at or after its expires_at is consumed.
   TLC must report a violation of NoConsumeAtOrAfterExpiry
   (expiry.no-consume-after); the same bug in model.py fails the Python
   invariant check and the lockstep (tests/test_model_bugs.py).
   Constants of MCPausepointLive. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q1">>], [kind |-> "end"] >>,
     << [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0, 1>>

\* ResumeResult without `ps.phase \in Live /\ t >= ps.expires_at`
ResumeResultNoExpiryCheck(ps, t, v) ==
    IF ps.phase = "expired"
    THEN "pause_expired"
    ELSE CASE ps.phase = "resumable"       -> "consumed"
           [] ps.phase = "unknown_outcome" -> "outcome_unknown"
           [] ps.phase = "paused"          -> "not_resumable"
           [] ps.phase = "consumed"        ->
                IF v = ps.response_digest THEN "replayed" ELSE "response_conflict"
           [] ps.phase = "cancelled"       -> "pause_cancelled"
           [] OTHER                        -> "invalid_transition"
============================================================
