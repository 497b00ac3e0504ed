----------------------------- MODULE Pausepoint -----------------------------
(***************************************************************************)
(* The pausepoint system model: scripted runs with side effects and asks,  *)
(* the pause points those asks open (each stepped through the lifecycle    *)
(* table), resume servers that read a ledger row and then commit with a    *)
(* conditional version check, a clock with expiry, effects that can be cut *)
(* off between start and finish (unknown outcome), crash and restart that  *)
(* lose volatile state but keep durable state, and cancellation that       *)
(* propagates to child runs.                                               *)
(*                                                                         *)
(* This is the spec of reference/pausepoint/model.py.  The two are kept in *)
(* lockstep: model.py explored exhaustively with the constants of          *)
(* MCPausepoint reaches exactly the states TLC reaches (tla/manifest.json, *)
(* tla/results/, `pausepoint check`).  Action names are model.successors'  *)
(* labels, invariant names are the keys of model.INVARIANTS, and comments  *)
(* cite the clause ids of reference/pausepoint/clauses.py.                 *)
(*                                                                         *)
(* Python -> TLA+ representation:                                          *)
(*   tuples            -> sequences (run, slot and script indices are      *)
(*                        1-based here, 0-based in Python)                 *)
(*   None              -> NoDigest ("") / NoTime (-1)                      *)
(*   enum values       -> their string values ("paused", "in_effect", ...) *)
(*   idle resumer      -> run = 0, slot = 0 (no row read)                  *)
(*   RunState.fired    -> not represented (no action writes it)            *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Scripts,     \* Scripts[r]: run r's steps, each [kind |-> "effect", key |-> k],
                 \*   [kind |-> "ask", names |-> <<n1, ...>>] or [kind |-> "end"]
    Parents,     \* Parents[r]: the parent run of r, or 0 for a top-level run
    TTL,         \* a pause expires TTL ticks after it is taken
    MaxTime,     \* the clock's bound (a model-checking bound, not a semantic one)
    NResumers,   \* concurrent resume servers
    Responses,   \* the responses a person may give
    MaxCrashes,  \* the crash budget
    Bindings,    \* what a resume request presents, abstractly: "ok" (token bound to the
                 \*   request's run, root run, session and scope) or the claim that differs:
                 \*   "run", "root", "session", "scope"
    NKeys,       \* signing keys 1 .. NKeys: key 1 is active at first, Rotate activates the next
    SeededBugs   \* {} for the contract; a model of a seeded design bug names it here
                 \*   (model.SEEDED_BUGS, each with the property that must catch it)

VARIABLES now, runs, resumers, crashes, keys
vars == <<now, runs, resumers, crashes, keys>>

Runs == 1 .. Len(Scripts)
Resumers == 1 .. NResumers
NoDigest == ""
NoTime == -1

Seeded(b) == b \in SeededBugs

RECURSIVE Root(_)
Root(r) == IF Parents[r] = 0 THEN r ELSE Root(Parents[r])

-----------------------------------------------------------------------------
(* The lifecycle of one pause point: the rows of lifecycle.TABLE that the *)
(* system model exercises (clause lifecycle.transition.table).            *)

Live == {"paused", "resumable", "unknown_outcome"}   \* lifecycle.outstanding.live
Terminal == {"consumed", "expired", "cancelled"}     \* lifecycle.terminal.absorbing

PS(phase, exp, turn, digest, at) ==
    [phase |-> phase, expires_at |-> exp, turn_recorded |-> turn,
     response_digest |-> digest, consumed_at |-> at]

NoPause == PS("running", 0, FALSE, NoDigest, NoTime)   \* PauseState()

\* Pause: running -> paused (pause.refusal.before-mint: the mint is this step)
LcPause(exp) == PS("paused", exp, FALSE, NoDigest, NoTime)

\* RecordTurn(written = TRUE): paused -> resumable; unknown_outcome keeps its phase
\* (turn.resumable.earned)
LcRecordTurn(ps) ==
    [ps EXCEPT !.phase = IF @ = "paused" THEN "resumable" ELSE @, !.turn_recorded = TRUE]

\* MarkUnknown: paused / resumable / unknown_outcome -> unknown_outcome (effect.unknown-outcome)
LcMarkUnknown(ps) == [ps EXCEPT !.phase = "unknown_outcome"]

\* Expire: a live pause once the clock has reached expires_at (expiry.transition)
LcExpireOK(ps, t) == ps.phase \in Live /\ t >= ps.expires_at
LcExpire(ps) == [ps EXCEPT !.phase = "expired"]

\* Cancel: any non-terminal phase (cancel.distinct)
LcCancelOK(ps) == ps.phase \in {"running"} \cup Live
LcCancel(ps) == [ps EXCEPT !.phase = "cancelled"]

\* Reconcile: unknown_outcome -> resumable if the turn was recorded, else paused (effect.reconcile)
LcReconcileOK(ps) == ps.phase = "unknown_outcome"
LcReconcile(ps) == [ps EXCEPT !.phase = IF ps.turn_recorded THEN "resumable" ELSE "paused"]

(* Resume (authority and a valid response taken as given): the outcome, in   *)
(* the fixed check order of resume.refusal.order -- "consumed", "replayed"   *)
(* or the refusal's code.  keyOK: the token's key is still in the key ring   *)
(* (resume.token.authentic, token.key-id); b: the request's binding.         *)
ResumeResult(ps, t, v, b, keyOK) ==
    IF ~keyOK THEN "token_invalid"
    ELSE IF Seeded("binding_before_expiry") /\ b # "ok" THEN "binding_mismatch"
    ELSE IF ps.phase = "expired"
            \/ (ps.phase \in Live /\ t >= ps.expires_at /\ ~Seeded("no_expiry_check"))
    THEN "pause_expired"                                   \* resume.expiry
    ELSE IF b \in {"run", "root", "session"} /\ ~Seeded("binding_unchecked")
    THEN "binding_mismatch"                                \* resume.binding.run
    ELSE IF b = "scope" /\ ~Seeded("binding_unchecked")
    THEN "scope_mismatch"                                  \* resume.binding.scope
    ELSE CASE ps.phase = "resumable"       -> "consumed"   \* resume.consume.single-winner
           [] ps.phase = "unknown_outcome" ->             \* resume.unknown-outcome.blocks
                IF Seeded("unknown_consumable") THEN "consumed" ELSE "outcome_unknown"
           [] ps.phase = "paused"          -> "not_resumable"     \* turn.write-failed.stays-paused
           [] ps.phase = "consumed"        ->
                IF Seeded("replay_as_conflict") THEN "response_conflict"
                ELSE IF v = ps.response_digest \/ Seeded("conflict_as_replay")
                THEN "replayed"                                  \* replay.same-response
                ELSE "response_conflict"                        \* replay.different-response.conflict
           [] ps.phase = "cancelled"       ->                    \* cancel.distinct
                IF Seeded("cancel_told_expired") THEN "pause_expired" ELSE "pause_cancelled"
           [] OTHER                        -> "invalid_transition"

LcConsume(ps, t, v) ==
    [ps EXCEPT !.phase = "consumed", !.response_digest = v, !.consumed_at = t]

-----------------------------------------------------------------------------
(* Runs, slots (pause points of a run), resumers, what resumers were told,  *)
(* and the key ring.                                                        *)

Executing == {"running", "in_effect", "applied"}

\* A resumer is idle, has read a row ("read"), or has been told the outcome of its
\* commit ("told", with told = the outcome and the request it answered): the
\* history of what it was told, kept until it reads again.
IdleResumer ==
    [phase |-> "idle", run |-> 0, slot |-> 0, response |-> "", binding |-> "ok",
     seen |-> NoPause, seen_version |-> 0, told |-> ""]

Slots(r) == DOMAIN runs[r].slots

RECURSIVE SumNames(_, _)
SumNames(sc, j) ==
    IF j > Len(sc) THEN 0
    ELSE (IF sc[j].kind = "ask" THEN Len(sc[j].names) ELSE 0) + SumNames(sc, j + 1)

\* every slot index run r can ever have: one per ask name, one per crash (recovery)
SlotBound(r) == 1 .. (SumNames(Scripts[r], 1) + MaxCrashes)

WithSlot(run, k, slot) == [run EXCEPT !.slots[k] = slot]

Bump(slot, ps) == [slot EXCEPT !.state = ps, !.version = @ + 1]

\* A new pause point of run r: its token is signed by the active key and bound to
\* the live run and its root run (run.binding.live, token.claims).  write: the
\* turn-checkpoint write ("none", "failed", "ok").
NewSlot(r, pc, kind, ps, ver, write) ==
    [pc |-> pc, kind |-> kind, state |-> ps, version |-> ver, consumes |-> 0,
     kid |-> keys.active,
     root |-> IF Seeded("root_from_parent") /\ Parents[r] # 0 THEN Parents[r] ELSE Root(r),
     write |-> write]

Init ==
    /\ now = 0
    /\ crashes = 0
    /\ runs = [r \in Runs |->
                [phase |-> "idle", pc |-> 1, slots |-> <<>>, cancel |-> "none",
                 journal |-> [j \in 1 .. Len(Scripts[r]) |-> "none"],
                 counts |-> [j \in 1 .. Len(Scripts[r]) |-> 0]]]
    /\ resumers = [i \in Resumers |-> IdleResumer]
    /\ keys = [active |-> 1, retired |-> {}]

RECURSIVE CancelledAbove(_)
CancelledAbove(r) ==
    runs[r].phase = "cancelled" \/ (Parents[r] # 0 /\ CancelledAbove(Parents[r]))

\* An idle top-level run, or a child whose parent has started, with no cancelled
\* ancestor (a child of a done run whose own parent was cancelled is not started:
\* the cancel loop passed the done run before the child existed).
StartRun(r) ==
    /\ runs[r].phase = "idle"
    /\ IF Parents[r] = 0 THEN TRUE
       ELSE runs[Parents[r]].phase # "idle" /\ ~CancelledAbove(Parents[r])
    /\ runs' = [runs EXCEPT ![r].phase = "running"]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* A running run takes its next script step.  An effect journalled finished is
\* skipped, never re-run (effect.at-most-once); an effect is journalled started
\* before it runs (effect.journal.bracket); an ask opens one pause per name
\* (multi.independent), each bound to the run's recorded position -- unless a
\* cancel of the run is under way: pause() reads the run's status and takes no
\* pause then (the run waits for the cancel to finish).
Execute(r) ==
    LET run == runs[r]
        st == Scripts[r][run.pc]
    IN /\ run.phase = "running"
       /\ CASE st.kind = "end" ->
                 runs' = [runs EXCEPT ![r].phase = "done"]
            [] st.kind = "effect" /\ run.journal[run.pc] = "finished" ->
                 runs' = [runs EXCEPT ![r].pc = run.pc + 1]
            [] st.kind = "effect" ->
                 runs' = [runs EXCEPT ![r].journal[run.pc] =
                                        IF Seeded("apply_unjournalled") THEN @ ELSE "started",
                                      ![r].phase = "in_effect"]
            [] st.kind = "ask" ->
                 /\ run.cancel = "none" \/ Seeded("pause_ignores_cancel")
                 /\ runs' = [runs EXCEPT ![r].phase = "paused",
                              ![r].slots = run.slots \o
                                [n \in 1 .. Len(st.names) |->
                                   IF Seeded("mint_resumable")
                                   THEN NewSlot(r, run.pc, "ask", LcRecordTurn(LcPause(now + TTL)),
                                                1, "ok")
                                   ELSE NewSlot(r, run.pc, "ask", LcPause(now + TTL), 1, "none")]]
       /\ UNCHANGED <<now, resumers, crashes, keys>>

\* The world changes: the effect's execution count goes up by one.
ApplyEffect(r) ==
    /\ runs[r].phase = "in_effect"
    /\ runs' = [runs EXCEPT ![r].phase = "applied", ![r].counts[runs[r].pc] = @ + 1]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* Journal the effect finished and move past it (effect.journal.bracket).
FinishEffect(r) ==
    /\ runs[r].phase = "applied"
    /\ runs' = [runs EXCEPT ![r].journal[runs[r].pc] = "finished", ![r].phase = "running",
                            ![r].pc = @ + 1]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* The turn-checkpoint write for slot k reports success, in a step of its own
\* after the pause (turn.resumable.earned); a retry after a failed write too.
RecordTurn(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ slot.state.phase = "paused"
          /\ ~slot.state.turn_recorded
          /\ runs' = [runs EXCEPT ![r].slots[k] =
                        [Bump(slot, LcRecordTurn(slot.state)) EXCEPT !.write = "ok"]]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* The turn-checkpoint write for slot k fails: the pause stays paused and not
\* resumable (turn.write-failed.stays-paused); only the write's outcome is noted.
RecordTurnFailed(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ \/ slot.state.phase = "paused" /\ slot.write = "none"
             \/ Seeded("demote_on_failed_write") /\ slot.state.phase = "resumable"
          /\ runs' = [runs EXCEPT ![r].slots[k] =
                        IF Seeded("failed_write_resumable")
                        THEN [Bump(slot, LcRecordTurn(slot.state)) EXCEPT !.write = "failed"]
                        ELSE IF slot.state.phase = "resumable"
                        THEN [Bump(slot, [slot.state EXCEPT !.phase = "paused",
                                                            !.turn_recorded = FALSE])
                              EXCEPT !.write = "failed"]
                        ELSE [slot EXCEPT !.write = "failed"]]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* Resumer i reads slot k of run r (state and version), to answer it with
\* response v, presenting a request whose binding is b.
ResumeRead(i, r, k, v, b) ==
    /\ resumers[i].phase \in {"idle", "told"}
    /\ k \in Slots(r)
    /\ resumers' = [resumers EXCEPT ![i] =
                      [phase |-> "read", run |-> r, slot |-> k, response |-> v, binding |-> b,
                       seen |-> runs[r].slots[k].state,
                       seen_version |-> runs[r].slots[k].version, told |-> ""]]
    /\ UNCHANGED <<now, runs, crashes, keys>>

\* What resumer i is told when it commits now: "retry" when the row's version
\* moved since it read (it reads again), else ResumeResult on what it read.
CommitResult(i) ==
    LET res == resumers[i]
        slot == runs[res.run].slots[res.slot]
    IN IF slot.version # res.seen_version /\ ~Seeded("no_version_check") THEN "retry"
       ELSE ResumeResult(res.seen, now, res.response, res.binding,
                         slot.kid \notin keys.retired)

\* Decide on what was read.  The consume is a conditional update: written only if
\* the row still has the version read (resume.consume.single-winner); otherwise
\* the resumer reads again.  A refusal changes no stored state
\* (lifecycle.refusal.no-change, resume.refusal.keeps-pause) except that a resume
\* refused for expiry records the expiry it found due.  What the resumer is told
\* is kept in its `told` (with the request: slot, response, binding).
ResumeCommit(i) ==
    LET res == resumers[i]
        run == runs[res.run]
        slot == run.slots[res.slot]
        result == CommitResult(i)
        consumed == [slot EXCEPT !.state = LcConsume(res.seen, now, res.response),
                                 !.version = @ + 1, !.consumes = @ + 1]
    IN /\ res.phase = "read"
       /\ IF result = "retry"
          THEN /\ resumers' = [resumers EXCEPT ![i].seen = slot.state,
                                               ![i].seen_version = slot.version]
               /\ UNCHANGED runs
          ELSE /\ resumers' = [resumers EXCEPT ![i].phase = "told", ![i].told = result,
                                               ![i].seen = NoPause, ![i].seen_version = 0]
               /\ CASE result = "consumed" ->
                        runs' = [runs EXCEPT ![res.run] =
                                   IF Seeded("answer_all_siblings")
                                   THEN [run EXCEPT !.slots =
                                           [j \in DOMAIN run.slots |->
                                              IF j = res.slot THEN consumed
                                              ELSE IF run.slots[j].pc = slot.pc
                                                      /\ run.slots[j].state.phase = "resumable"
                                                   THEN [run.slots[j] EXCEPT
                                                           !.state = LcConsume(@, now, res.response),
                                                           !.version = @ + 1, !.consumes = @ + 1]
                                                   ELSE run.slots[j]]]
                                   ELSE WithSlot(run, res.slot, consumed)]
                    [] result = "pause_expired" /\ LcExpireOK(slot.state, now) ->
                        runs' = [runs EXCEPT ![res.run].slots[res.slot] =
                                   Bump(slot, LcExpire(slot.state))]
                    [] result = "replayed" /\ Seeded("replay_recounts") ->
                        runs' = [runs EXCEPT ![res.run].slots[res.slot].consumes = @ + 1]
                    [] Seeded("refusal_bumps_version") ->
                        runs' = [runs EXCEPT ![res.run].slots[res.slot].version = @ + 1]
                    [] OTHER -> UNCHANGED runs
       /\ UNCHANGED <<now, crashes, keys>>

\* The pause points of run r's current step.
AtPc(r) == {j \in Slots(r) : runs[r].slots[j].pc = runs[r].pc}

\* Run r may continue: every pause of its step is consumed (multi.independent), or
\* the newest pause is a consumed recovery pause.
Answered(r) ==
    LET run == runs[r]
        n == Len(run.slots)
    IN /\ n > 0
       /\ run.slots[n].pc = run.pc
       /\ IF run.slots[n].kind = "recovery"
          THEN run.slots[n].state.phase = "consumed"
          ELSE IF Seeded("continue_after_first_answer")
          THEN \E j \in AtPc(r) : run.slots[j].state.phase = "consumed"
          ELSE \A j \in AtPc(r) : run.slots[j].state.phase = "consumed"

\* The run continues from the recorded turn, in a step of its own after the
\* consume, so a crash can fall between the two (resume.continuation.recorded-turn).
Continue(r) ==
    LET run == runs[r]
        n == Len(run.slots)
    IN /\ run.phase = "paused"
       /\ Answered(r)
       /\ runs' = [runs EXCEPT ![r].phase = "running",
                               ![r].pc = IF run.slots[n].kind = "recovery" THEN @ ELSE @ + 1]
       /\ UNCHANGED <<now, resumers, crashes, keys>>

\* The clock advances by one, up to MaxTime.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<runs, resumers, crashes, keys>>

\* A live pause whose expires_at has been reached becomes expired (expiry.transition).
Expire(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ LcExpireOK(slot.state, IF Seeded("expire_early") THEN now + 1 ELSE now)
          /\ runs' = [runs EXCEPT ![r].slots[k] = Bump(slot, LcExpire(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

(* Cancel, as the service's cancel_run loop runs it: not one atomic step but, *)
(* for each run of the tree in turn, mark it cancelling ("queued"), cancel its *)
(* live pauses ("scanned"), mark it cancelled and queue its children -- through *)
(* a run already done, whose children may still wait (cancel.distinct,        *)
(* cancel.propagates).  Other steps interleave: a run keeps executing while   *)
(* its cancel is under way.                                                   *)
CancelBegin(r) ==
    /\ runs[r].phase \notin {"done", "cancelled", "idle"}
    /\ runs[r].cancel = "none"
    /\ runs' = [runs EXCEPT ![r].cancel = "queued"]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

CancelScan(r) ==
    /\ runs[r].cancel = "queued"
    /\ runs' = [runs EXCEPT ![r].cancel = "scanned",
                  ![r].slots = [j \in Slots(r) |->
                                  IF LcCancelOK(runs[r].slots[j].state)
                                     /\ ~(Seeded("scan_skips_unknown")
                                          /\ runs[r].slots[j].state.phase = "unknown_outcome")
                                  THEN Bump(runs[r].slots[j], LcCancel(runs[r].slots[j].state))
                                  ELSE runs[r].slots[j]]]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

Children(r) == {c \in Runs : Parents[c] = r}

CancelFinish(r) ==
    /\ runs[r].cancel = "scanned"
    /\ runs' = [d \in Runs |->
                  IF d = r
                  THEN [runs[d] EXCEPT !.cancel = "none",
                          !.phase = IF @ \in {"done", "cancelled"} /\ ~Seeded("cancel_done_run")
                                    THEN @ ELSE "cancelled"]
                  ELSE IF d \in Children(r) /\ runs[d].cancel = "none"
                          /\ runs[d].phase \notin {"idle", "cancelled"}
                          /\ ~(Seeded("cancel_skips_done") /\ runs[d].phase = "done")
                  THEN [runs[d] EXCEPT !.cancel = "queued"]
                  ELSE runs[d]]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* The process dies: volatile state is lost -- executing runs stop where they
\* were, resumers forget what they read -- and durable state (ledger rows,
\* journal, effect counts, run status with a cancel under way) stays
\* (durability.restart).
Crash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ runs' = [r \in Runs |->
                  LET run == IF runs[r].phase \in Executing
                             THEN [runs[r] EXCEPT !.phase = "stopped"] ELSE runs[r]
                  IN IF Seeded("crash_loses_pauses")
                     THEN [run EXCEPT !.slots = [j \in DOMAIN run.slots |->
                              IF run.slots[j].state.phase \in Live
                              THEN Bump(run.slots[j], LcExpire(run.slots[j].state))
                              ELSE run.slots[j]]]
                     ELSE run]
    /\ resumers' = [i \in Resumers |-> IdleResumer]
    /\ UNCHANGED <<now, keys>>

\* A stopped run is recovered from its checkpoint.  An effect journalled started
\* and not finished is an unknown outcome: a recovery pause is opened in
\* unknown_outcome (Pause, MarkUnknown, RecordTurn), never a retry
\* (effect.unknown-outcome).  Not while a cancel of the run is under way.
Restart(r) ==
    LET run == runs[r]
    IN /\ run.phase = "stopped"
       /\ run.cancel = "none"
       /\ IF run.journal[run.pc] # "started"
          THEN runs' = [runs EXCEPT ![r].phase = "running"]
          ELSE runs' = [runs EXCEPT ![r].phase = "paused",
                          ![r].slots = Append(run.slots,
                            NewSlot(r, run.pc, "recovery",
                                    LcRecordTurn(LcMarkUnknown(LcPause(now + TTL))), 3, "ok"))]
       /\ UNCHANGED <<now, resumers, crashes, keys>>

\* Someone marks a live pause of an ask as waiting on an unknown outcome
\* (effect.unknown-outcome): it blocks resumes until reconciled.
MarkUnknown(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ slot.kind = "ask"
          /\ slot.state.phase \in {"paused", "resumable"}
          /\ slot.version <= 2       \* once per pause: a model bound
          /\ runs' = [runs EXCEPT ![r].slots[k] = Bump(slot, LcMarkUnknown(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* Someone checks the world and says whether the in-doubt effect was applied; only
\* the true answer is modelled.  Applied: journalled finished, so the continuation
\* skips it.  Not applied: journal cleared, so the continuation runs it once
\* (effect.reconcile, effect.at-most-once).  A marked ask pause is reconciled
\* (applied) back to where its turn allows.
Reconcile(r, k, applied) ==
    /\ k \in Slots(r)
    /\ LET run == runs[r]
           slot == run.slots[k]
       IN /\ LcReconcileOK(slot.state)
          /\ IF slot.kind = "recovery"
             THEN /\ applied = (run.counts[slot.pc] > 0) \/ Seeded("reconcile_guess")
                  /\ runs' = [runs EXCEPT
                                ![r].journal[slot.pc] = IF applied THEN "finished" ELSE "none",
                                ![r].slots[k] = Bump(slot, LcReconcile(slot.state))]
             ELSE /\ applied
                  /\ runs' = [runs EXCEPT ![r].slots[k] = Bump(slot, LcReconcile(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes, keys>>

\* Key rotation: the next key becomes active; tokens already minted keep theirs.
Rotate ==
    /\ keys.active < NKeys
    /\ keys' = [keys EXCEPT !.active = @ + 1]
    /\ UNCHANGED <<now, runs, resumers, crashes>>

\* The outstanding pauses whose token key k signed: the drain proof
\* (lifecycle.outstanding.live: outstanding exactly while live).
Outstanding(k) == {<<r, j>> \in UNION {{d} \X Slots(d) : d \in Runs} :
                     j \in Slots(r) /\ runs[r].slots[j].kid = k
                     /\ runs[r].slots[j].state.phase \in Live}

\* An old key is retired only when the drain proof shows no outstanding token
\* signed by it (token.rotation.drain); tokens it signed then no longer verify.
Retire(k) ==
    /\ k < keys.active
    /\ k \notin keys.retired
    /\ Outstanding(k) = {} \/ Seeded("retire_undrained")
    /\ keys' = [keys EXCEPT !.retired = @ \cup {k}]
    /\ UNCHANGED <<now, runs, resumers, crashes>>

Next ==
    \/ \E r \in Runs :
        \/ StartRun(r) \/ Execute(r) \/ ApplyEffect(r) \/ FinishEffect(r)
        \/ CancelBegin(r) \/ CancelScan(r) \/ CancelFinish(r) \/ Restart(r) \/ Continue(r)
        \/ \E k \in Slots(r) :
            \/ RecordTurn(r, k) \/ RecordTurnFailed(r, k)
            \/ Expire(r, k) \/ MarkUnknown(r, k)
            \/ \E b \in BOOLEAN : Reconcile(r, k, b)
            \/ \E i \in Resumers, v \in Responses, b \in Bindings : ResumeRead(i, r, k, v, b)
    \/ \E i \in Resumers : ResumeCommit(i)
    \/ Tick
    \/ Crash
    \/ Rotate
    \/ \E k \in 1 .. NKeys : Retire(k)

Spec == Init /\ [][Next]_vars

\* Weak fairness on the clock, on each expiry and on each continuation: time
\* passes, a due pause is expired and an answered run continues (nobody is
\* obliged to answer).
Fairness ==
    /\ WF_vars(Tick)
    /\ \A r \in Runs : \A k \in SlotBound(r) : WF_vars(Expire(r, k))
    /\ \A r \in Runs : WF_vars(Continue(r))

LiveSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Invariants, named as model.INVARIANTS; each names the clauses it checks. *)

SlotOf(e) == runs[e.run].slots[e.slot]
Told == {resumers[i] : i \in {j \in Resumers : resumers[j].phase = "told"}}

\* lifecycle.states
TypeOK ==
    /\ now \in 0 .. MaxTime
    /\ crashes \in 0 .. MaxCrashes
    /\ \A r \in Runs : runs[r].phase \in
         {"idle", "running", "in_effect", "applied", "paused", "stopped", "done", "cancelled"}
    /\ \A r \in Runs : \A k \in Slots(r) : runs[r].slots[k].state.phase \in Live \cup Terminal
    /\ \A i \in Resumers : resumers[i].phase \in {"idle", "read", "told"}
    /\ keys.active \in 1 .. NKeys /\ keys.retired \subseteq 1 .. NKeys

\* resume.consume.at-most-once
AtMostOnceConsumption ==
    \A r \in Runs : \A k \in Slots(r) : runs[r].slots[k].consumes <= 1

\* expiry.no-consume-after, resume.expiry (lifecycle.inv_consumed_before_expiry)
NoConsumeAtOrAfterExpiry ==
    \A r \in Runs : \A k \in Slots(r) :
        LET ps == runs[r].slots[k].state
        IN IF ps.phase # "consumed"
           THEN ps.consumed_at = NoTime /\ ps.response_digest = NoDigest
           ELSE /\ ps.consumed_at # NoTime
                /\ ps.consumed_at < ps.expires_at
                /\ ps.response_digest # NoDigest

\* expiry.transition: a pause is expired only once the clock reached its expires_at
\* (the clock never goes back, so checking every state checks the expiring step)
ExpiredOnlyWhenDue ==
    \A r \in Runs : \A k \in Slots(r) :
        runs[r].slots[k].state.phase = "expired" => now >= runs[r].slots[k].state.expires_at

\* turn.resumable.earned (lifecycle.inv_resumable_has_turn)
ResumableHasTurn ==
    \A r \in Runs : \A k \in Slots(r) :
        runs[r].slots[k].state.phase = "resumable" => runs[r].slots[k].state.turn_recorded

\* turn.resumable.earned, turn.write-failed.stays-paused: the turn is recorded only
\* by a write that reported success
TurnRecordedOnlyByWrite ==
    \A r \in Runs : \A k \in Slots(r) :
        runs[r].slots[k].state.turn_recorded => runs[r].slots[k].write = "ok"

\* effect.at-most-once
EffectsAtMostOnce ==
    \A r \in Runs : \A j \in DOMAIN runs[r].counts : runs[r].counts[j] <= 1

\* effect.journal.bracket: an effect that ran was journalled started first
EffectJournalBracket ==
    \A r \in Runs :
        /\ \A j \in DOMAIN runs[r].counts : runs[r].counts[j] > 0 => runs[r].journal[j] # "none"
        /\ runs[r].phase \in {"in_effect", "applied"} => runs[r].journal[runs[r].pc] = "started"

\* effect.reconcile: an effect is journalled finished only if it really ran
ReconcileTruthful ==
    \A r \in Runs : \A j \in DOMAIN runs[r].counts :
        runs[r].journal[j] = "finished" => runs[r].counts[j] > 0

\* resume.unknown-outcome.blocks, effect.unknown-outcome: a run continues (is running)
\* only with no effect in doubt at its step
NoResumeWhileUnknown ==
    \A r \in Runs : runs[r].phase = "running" => runs[r].journal[runs[r].pc] # "started"

\* lifecycle.states: a paused run has pause points at its current step, live or decided
PausedRunHasPausePoints ==
    \A r \in Runs : runs[r].phase = "paused" => AtPc(r) # {}

\* resume.continuation.recorded-turn, multi.independent: a run is past an ask only
\* when every pause of that ask was consumed
ContinuesOnlyWhenAllAnswered ==
    \A r \in Runs : \A k \in Slots(r) :
        (runs[r].slots[k].kind = "ask" /\ runs[r].pc > runs[r].slots[k].pc)
        => runs[r].slots[k].state.phase = "consumed"

\* cancel.distinct: a run marked cancelled has no live pause
CancelledRunHasNoLivePause ==
    \A r \in Runs : runs[r].phase = "cancelled" =>
        \A k \in Slots(r) : runs[r].slots[k].state.phase \notin Live

\* cancel.propagates: once no cancel is under way, no live pause under a cancelled
\* run or a cancelled ancestor (the whole run tree)
CancelPropagated ==
    (\A d \in Runs : runs[d].cancel = "none") =>
        \A r \in Runs : \A k \in Slots(r) :
            ~(CancelledAbove(r) /\ runs[r].slots[k].state.phase \in Live)

\* resume.consume.single-winner, race.decided-once: one resumer is told consumed,
\* with the response the pause recorded
OneWinner ==
    \A e \in Told : e.told = "consumed" =>
        /\ SlotOf(e).state.phase = "consumed"
        /\ SlotOf(e).state.response_digest = e.response
        /\ \A f \in Told : f.told = "consumed" /\ f.run = e.run /\ f.slot = e.slot
                  => f.response = e.response

\* replay.same-response: a replay is told only for the first outcome's response
ReplayEqualsFirst ==
    \A e \in Told : e.told = "replayed" =>
        SlotOf(e).state.phase = "consumed" /\ SlotOf(e).state.response_digest = e.response

\* replay.different-response.conflict: a conflict only for a different response
ConflictIsDifferent ==
    \A e \in Told : e.told = "response_conflict" =>
        SlotOf(e).state.phase = "consumed" /\ SlotOf(e).state.response_digest # e.response

\* race.decided-once, cancel.distinct: a loser is told which state won
LoserToldWhoWon ==
    \A e \in Told :
        /\ e.told = "pause_expired" => SlotOf(e).state.phase = "expired"
        /\ e.told = "pause_cancelled" => SlotOf(e).state.phase = "cancelled"

\* resume.binding.run, resume.binding.scope: consumed only by a request whose run,
\* root run, session and scope match the token
ConsumedOnlyWithMatchingBinding ==
    \A e \in Told : e.told = "consumed" => e.binding = "ok"

\* run.binding.live, token.claims: every token is bound to its live run and that
\* run's root run
TokenBoundToRunAndRoot ==
    \A r \in Runs : \A k \in Slots(r) : runs[r].slots[k].root = Root(r)

\* token.rotation.drain, token.key-id, resume.token.authentic, lifecycle.outstanding.live:
\* no outstanding (live) pause's token is signed by a retired key
RetiredKeyDrained ==
    \A k \in keys.retired : Outstanding(k) = {}

-----------------------------------------------------------------------------
(* Action properties, named as model.ACTION_PROPERTIES.                     *)

St(rs, r, k) == rs[r].slots[k].state

\* lifecycle.terminal.absorbing
TerminalAbsorbing ==
    [][\A r \in Runs : \A k \in Slots(r) :
          runs[r].slots[k].state.phase \in Terminal =>
              runs'[r].slots[k].state = runs[r].slots[k].state]_vars

\* lifecycle.transition.table: every change of a pause's phase is a row of the table
TableEdges ==
    {<<"paused", "resumable">>, <<"paused", "unknown_outcome">>,
     <<"resumable", "unknown_outcome">>, <<"unknown_outcome", "resumable">>,
     <<"unknown_outcome", "paused">>, <<"resumable", "consumed">>}
     \cup {<<p, q>> : p \in Live, q \in {"expired", "cancelled"}}

OnlyTableTransitions ==
    [][\A r \in Runs : \A k \in Slots(r) :
          St(runs', r, k).phase = St(runs, r, k).phase
          \/ <<St(runs, r, k).phase, St(runs', r, k).phase>> \in TableEdges]_vars

\* turn.resumable.earned: a new ask pause is minted paused, its turn not yet
\* recorded; the write is a step of its own
TurnWrittenSeparately ==
    [][\A r \in Runs : \A k \in DOMAIN runs'[r].slots \ Slots(r) :
          runs'[r].slots[k].kind = "ask" =>
              /\ St(runs', r, k).phase = "paused"
              /\ ~St(runs', r, k).turn_recorded
              /\ runs'[r].slots[k].write = "none"]_vars

\* resume.unknown-outcome.blocks: only a resumable pause is consumed
UnknownNeverConsumed ==
    [][\A r \in Runs : \A k \in Slots(r) :
          St(runs', r, k).phase = "consumed" /\ St(runs, r, k).phase # "consumed"
          => St(runs, r, k).phase = "resumable"]_vars

\* The resumers whose commit decides in this step (not a retry), and what they are told.
Deciding == {i \in Resumers : resumers[i].phase = "read" /\ resumers'[i].phase = "told"}

\* lifecycle.refusal.no-change, resume.refusal.keeps-pause, effect.refusal.no-effect:
\* a commit that tells a resumer a refusal changes no stored state, except the
\* expiry a refusal for expiry found due
RefusalChangesNothing ==
    [][\A i \in Deciding :
          LET e == resumers'[i]
          IN e.told \notin {"consumed", "replayed"} =>
              /\ keys' = keys
              /\ \A r \in Runs :
                   /\ runs'[r].phase = runs[r].phase
                   /\ runs'[r].journal = runs[r].journal
                   /\ runs'[r].counts = runs[r].counts
                   /\ \A k \in Slots(r) :
                        \/ runs'[r].slots[k] = runs[r].slots[k]
                        \/ /\ e.told = "pause_expired" /\ r = e.run /\ k = e.slot
                           /\ St(runs', r, k).phase = "expired"]_vars

\* multi.independent, resume.token.binds-one-pause: answering one pause (with its
\* token) changes no other pause
MultiIndependent ==
    [][\A i \in Deciding :
          LET e == resumers'[i]
          IN e.told = "consumed" =>
              \A r \in Runs : \A k \in Slots(r) :
                  <<r, k>> # <<e.run, e.slot>> => runs'[r].slots[k] = runs[r].slots[k]]_vars

\* durability.restart, durability.token.reissue, durability.commit-per-change: a crash
\* loses no pause and changes none (each keeps its state and its token: what was
\* reported was durable)
PausesSurviveCrash ==
    [][crashes' > crashes =>
          \A r \in Runs : runs'[r].slots = runs[r].slots /\ runs'[r].journal = runs[r].journal
                          /\ runs'[r].counts = runs[r].counts]_vars

\* resume.refusal.order: a request refused for its binding or scope was not due to
\* be refused for expiry (expiry is checked first)
RefusalOrder ==
    [][\A i \in Deciding :
          LET e == resumers'[i]
              ps == St(runs, e.run, e.slot)
          IN e.told \in {"binding_mismatch", "scope_mismatch"} =>
               ~(ps.phase = "expired" \/ (ps.phase \in Live /\ now >= ps.expires_at))]_vars

\* pause.refusal.before-mint: while a cancel of a run is under way a pause is refused
\* before any mint -- the run gets no new pause point
NoPauseWhileCancelling ==
    [][\A r \in Runs : runs[r].cancel # "none" => Len(runs'[r].slots) = Len(runs[r].slots)]_vars

\* run.events.single-terminal: a run that ended (done or cancelled) stays as it ended
RunTerminalAbsorbing ==
    [][\A r \in Runs : runs[r].phase \in {"done", "cancelled"} =>
          runs'[r].phase = runs[r].phase]_vars

\* Liveness under Fairness: every pause that falls due within the modelled time
\* horizon is eventually consumed, expired or cancelled (expiry.transition,
\* race.decided-once), and a run whose step is answered continues -- across a
\* crash between the consume and the continuation (resume.continuation.recorded-turn,
\* durability.restart).  (A pause taken so late that it falls due after MaxTime
\* is outside the horizon: the bounded clock never reaches its expiry.)
SlotState(r, k) == IF k \in Slots(r) THEN runs[r].slots[k].state ELSE NoPause

EveryPauseSettles ==
    \A r \in Runs : \A k \in SlotBound(r) :
        (SlotState(r, k).phase \in Live /\ SlotState(r, k).expires_at <= MaxTime)
        ~> (SlotState(r, k).phase \in Terminal)

AnsweredRunContinues ==
    \A r \in Runs : (runs[r].phase = "paused" /\ Answered(r)) ~> (runs[r].phase # "paused")

=============================================================================
