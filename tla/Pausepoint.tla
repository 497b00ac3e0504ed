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
    MaxCrashes   \* the crash budget

VARIABLES now, runs, resumers, crashes
vars == <<now, runs, resumers, crashes>>

Runs == 1 .. Len(Scripts)
Resumers == 1 .. NResumers
NoDigest == ""
NoTime == -1

-----------------------------------------------------------------------------
(* The lifecycle of one pause point: the rows of lifecycle.TABLE that the *)
(* system model exercises (clause lifecycle.transition.table).            *)

Live == {"paused", "resumable", "unknown_outcome"}
Terminal == {"consumed", "expired", "cancelled"}     \* lifecycle.terminal.absorbing

PS(phase, exp, turn, digest, at) ==
    [phase |-> phase, expires_at |-> exp, turn_recorded |-> turn,
     response_digest |-> digest, consumed_at |-> at]

NoPause == PS("running", 0, FALSE, NoDigest, NoTime)   \* PauseState()

\* Pause: running -> paused (pause.refusal.before-mint: the mint is this step)
LcPause(exp) == PS("paused", exp, FALSE, NoDigest, NoTime)

\* RecordTurn(written = TRUE): paused -> resumable; unknown_outcome keeps its phase
\* (turn.resumable.earned)
LcRecordTurnOK(ps) == ps.phase \in {"paused", "unknown_outcome"}
LcRecordTurn(ps) ==
    [ps EXCEPT !.phase = IF @ = "paused" THEN "resumable" ELSE @, !.turn_recorded = TRUE]

\* MarkUnknown: paused / resumable / unknown_outcome -> unknown_outcome (effect.unknown-outcome)
LcMarkUnknownOK(ps) == ps.phase \in Live
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

(* Resume with every fact true (authentic token, binding, scope, authority,  *)
(* valid response): the outcome, in the fixed check order of                 *)
(* resume.refusal.order -- "consumed", "replayed" or the refusal's code.     *)
ResumeResult(ps, t, v) ==
    IF ps.phase = "expired" \/ (ps.phase \in Live /\ t >= ps.expires_at)
    THEN "pause_expired"                                   \* resume.expiry
    ELSE CASE ps.phase = "resumable"       -> "consumed"   \* resume.consume.single-winner
           [] ps.phase = "unknown_outcome" -> "outcome_unknown"   \* resume.unknown-outcome.blocks
           [] ps.phase = "paused"          -> "not_resumable"     \* turn.write-failed.stays-paused
           [] ps.phase = "consumed"        ->
                IF v = ps.response_digest THEN "replayed"        \* replay.same-response
                ELSE "response_conflict"                        \* replay.different-response.conflict
           [] ps.phase = "cancelled"       -> "pause_cancelled"   \* cancel.distinct
           [] OTHER                        -> "invalid_transition"

LcConsume(ps, t, v) ==
    [ps EXCEPT !.phase = "consumed", !.response_digest = v, !.consumed_at = t]

-----------------------------------------------------------------------------
(* Runs, slots (pause points of a run) and resumers.                      *)

Executing == {"running", "in_effect", "applied"}

IdleResumer ==
    [phase |-> "idle", run |-> 0, slot |-> 0, response |-> "", seen |-> NoPause,
     seen_version |-> 0]

Slots(r) == DOMAIN runs[r].slots

RECURSIVE SumNames(_, _)
SumNames(sc, j) ==
    IF j > Len(sc) THEN 0
    ELSE (IF sc[j].kind = "ask" THEN Len(sc[j].names) ELSE 0) + SumNames(sc, j + 1)

\* every slot index run r can ever have: one per ask name, one per crash (recovery)
SlotBound(r) == 1 .. (SumNames(Scripts[r], 1) + MaxCrashes)

WithSlot(run, k, slot) == [run EXCEPT !.slots[k] = slot]

Bump(slot, ps) == [slot EXCEPT !.state = ps, !.version = @ + 1]

Init ==
    /\ now = 0
    /\ crashes = 0
    /\ runs = [r \in Runs |->
                [phase |-> "idle", pc |-> 1, slots |-> <<>>,
                 journal |-> [j \in 1 .. Len(Scripts[r]) |-> "none"],
                 counts |-> [j \in 1 .. Len(Scripts[r]) |-> 0]]]
    /\ resumers = [i \in Resumers |-> IdleResumer]

\* An idle top-level run, or a child whose parent is executing or paused.
StartRun(r) ==
    /\ runs[r].phase = "idle"
    /\ IF Parents[r] = 0 THEN TRUE ELSE runs[Parents[r]].phase \notin {"idle", "cancelled"}
    /\ runs' = [runs EXCEPT ![r].phase = "running"]
    /\ UNCHANGED <<now, resumers, crashes>>

\* A running run takes its next script step.  An effect journalled finished is
\* skipped, never re-run (effect.at-most-once); an effect is journalled started
\* before it runs (effect.journal.bracket); an ask opens one pause per name
\* (multi.independent), each bound to the run's recorded position.
Execute(r) ==
    LET run == runs[r]
        st == Scripts[r][run.pc]
    IN /\ run.phase = "running"
       /\ CASE st.kind = "end" ->
                 runs' = [runs EXCEPT ![r].phase = "done"]
            [] st.kind = "effect" /\ run.journal[run.pc] = "finished" ->
                 runs' = [runs EXCEPT ![r].pc = run.pc + 1]
            [] st.kind = "effect" ->
                 runs' = [runs EXCEPT ![r].journal[run.pc] = "started",
                                      ![r].phase = "in_effect"]
            [] st.kind = "ask" ->
                 runs' = [runs EXCEPT ![r].phase = "paused",
                            ![r].slots = run.slots \o
                              [n \in 1 .. Len(st.names) |->
                                 [pc |-> run.pc, kind |-> "ask", state |-> LcPause(now + TTL),
                                  version |-> 1, consumes |-> 0]]]
       /\ UNCHANGED <<now, resumers, crashes>>

\* The world changes: the effect's execution count goes up by one.
ApplyEffect(r) ==
    /\ runs[r].phase = "in_effect"
    /\ runs' = [runs EXCEPT ![r].phase = "applied", ![r].counts[runs[r].pc] = @ + 1]
    /\ UNCHANGED <<now, resumers, crashes>>

\* Journal the effect finished and move past it (effect.journal.bracket).
FinishEffect(r) ==
    /\ runs[r].phase = "applied"
    /\ runs' = [runs EXCEPT ![r].journal[runs[r].pc] = "finished", ![r].phase = "running",
                            ![r].pc = @ + 1]
    /\ UNCHANGED <<now, resumers, crashes>>

\* The turn-checkpoint write for slot k reports success (turn.resumable.earned);
\* a failed write changes nothing (turn.write-failed.stays-paused), so it is no step.
RecordTurn(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ slot.state.phase = "paused"
          /\ ~slot.state.turn_recorded
          /\ runs' = [runs EXCEPT ![r].slots[k] = Bump(slot, LcRecordTurn(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes>>

\* Resumer i reads slot k of run r (state and version), to answer it with response v.
ResumeRead(i, r, k, v) ==
    /\ resumers[i].phase = "idle"
    /\ k \in Slots(r)
    /\ resumers' = [resumers EXCEPT ![i] =
                      [phase |-> "read", run |-> r, slot |-> k, response |-> v,
                       seen |-> runs[r].slots[k].state,
                       seen_version |-> runs[r].slots[k].version]]
    /\ UNCHANGED <<now, runs, crashes>>

\* After slot k is consumed: continue from the recorded turn once every pause of
\* that step is consumed (resume.continuation.recorded-turn, multi.independent).
ContinueAfter(run, k) ==
    LET slot == run.slots[k]
        same == {j \in DOMAIN run.slots : run.slots[j].pc = slot.pc /\ run.slots[j].kind = "ask"}
    IN IF run.phase # "paused" THEN run
       ELSE IF slot.kind = "recovery" THEN [run EXCEPT !.phase = "running"]
       ELSE IF \A j \in same : run.slots[j].state.phase = "consumed"
            THEN [run EXCEPT !.phase = "running", !.pc = slot.pc + 1]
            ELSE run

\* Decide on what was read.  The consume is a conditional update: written only if
\* the row still has the version read (resume.consume.single-winner); otherwise
\* the resumer reads again.  A refusal changes no stored state
\* (lifecycle.refusal.no-change, resume.refusal.keeps-pause).
ResumeCommit(i) ==
    LET res == resumers[i]
        run == runs[res.run]
        slot == run.slots[res.slot]
    IN /\ res.phase = "read"
       /\ IF slot.version # res.seen_version
          THEN /\ resumers' = [resumers EXCEPT ![i].seen = slot.state,
                                               ![i].seen_version = slot.version]
               /\ UNCHANGED runs
          ELSE /\ resumers' = [resumers EXCEPT ![i] = IdleResumer]
               /\ IF ResumeResult(res.seen, now, res.response) = "consumed"
                  THEN runs' = [runs EXCEPT ![res.run] =
                                  ContinueAfter(
                                    WithSlot(run, res.slot,
                                      [slot EXCEPT !.state = LcConsume(res.seen, now, res.response),
                                                   !.version = @ + 1, !.consumes = @ + 1]),
                                    res.slot)]
                  ELSE UNCHANGED runs
       /\ UNCHANGED <<now, crashes>>

\* The clock advances by one, up to MaxTime.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<runs, resumers, crashes>>

\* A live pause whose expires_at has been reached becomes expired (expiry.transition).
Expire(r, k) ==
    /\ k \in Slots(r)
    /\ LET slot == runs[r].slots[k]
       IN /\ LcExpireOK(slot.state, now)
          /\ runs' = [runs EXCEPT ![r].slots[k] = Bump(slot, LcExpire(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes>>

\* The runs a cancel of r reaches: r and, transitively, its children -- through a
\* run already done, whose children may still wait -- except those already done or
\* cancelled (cancel.propagates).
RECURSIVE Reach(_)
Reach(r) == {r} \cup UNION {Reach(c) : c \in {c \in Runs : Parents[c] = r}}
Affected(r) == {d \in Reach(r) : runs[d].phase \notin {"done", "cancelled"}}

CancelRun(run) ==
    [run EXCEPT !.phase = "cancelled",
                !.slots = [j \in DOMAIN run.slots |->
                             IF LcCancelOK(run.slots[j].state)
                             THEN Bump(run.slots[j], LcCancel(run.slots[j].state))
                             ELSE run.slots[j]]]

\* The run and its child runs are cancelled with their live pauses
\* (cancel.distinct, cancel.propagates).
Cancel(r) ==
    /\ runs[r].phase \notin {"done", "cancelled", "idle"}
    /\ LET hit == Affected(r)
       IN runs' = [d \in Runs |-> IF d \in hit THEN CancelRun(runs[d]) ELSE runs[d]]
    /\ UNCHANGED <<now, resumers, crashes>>

\* The process dies: volatile state is lost -- executing runs stop where they
\* were, resumers forget what they read -- and durable state (ledger rows,
\* journal, effect counts) stays (durability.restart).
Crash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ runs' = [r \in Runs |-> IF runs[r].phase \in Executing
                               THEN [runs[r] EXCEPT !.phase = "stopped"] ELSE runs[r]]
    /\ resumers' = [i \in Resumers |-> IdleResumer]
    /\ UNCHANGED now

\* A stopped run is recovered from its checkpoint.  An effect journalled started
\* and not finished is an unknown outcome: a recovery pause is opened in
\* unknown_outcome (Pause, MarkUnknown, RecordTurn), never a retry
\* (effect.unknown-outcome).
Restart(r) ==
    LET run == runs[r]
    IN /\ run.phase = "stopped"
       /\ IF run.journal[run.pc] # "started"
          THEN runs' = [runs EXCEPT ![r].phase = "running"]
          ELSE runs' = [runs EXCEPT ![r].phase = "paused",
                          ![r].slots = Append(run.slots,
                            [pc |-> run.pc, kind |-> "recovery",
                             state |-> LcRecordTurn(LcMarkUnknown(LcPause(now + TTL))),
                             version |-> 3, consumes |-> 0])]
       /\ UNCHANGED <<now, resumers, crashes>>

\* Someone checks the world and says whether the in-doubt effect was applied; only
\* the true answer is modelled.  Applied: journalled finished, so the continuation
\* skips it.  Not applied: journal cleared, so the continuation runs it once
\* (effect.reconcile, effect.at-most-once).
Reconcile(r, k, applied) ==
    /\ k \in Slots(r)
    /\ LET run == runs[r]
           slot == run.slots[k]
       IN /\ slot.kind = "recovery"
          /\ applied = (run.counts[slot.pc] > 0)
          /\ LcReconcileOK(slot.state)
          /\ runs' = [runs EXCEPT
                        ![r].journal[slot.pc] = IF applied THEN "finished" ELSE "none",
                        ![r].slots[k] = Bump(slot, LcReconcile(slot.state))]
    /\ UNCHANGED <<now, resumers, crashes>>

Next ==
    \/ \E r \in Runs :
        \/ StartRun(r) \/ Execute(r) \/ ApplyEffect(r) \/ FinishEffect(r)
        \/ Cancel(r) \/ Restart(r)
        \/ \E k \in Slots(r) :
            \/ RecordTurn(r, k)
            \/ Expire(r, k)
            \/ \E b \in BOOLEAN : Reconcile(r, k, b)
            \/ \E i \in Resumers, v \in Responses : ResumeRead(i, r, k, v)
    \/ \E i \in Resumers : ResumeCommit(i)
    \/ Tick
    \/ Crash

Spec == Init /\ [][Next]_vars

\* Weak fairness on the clock and on each expiry: time passes and a due pause
\* is expired (nobody is obliged to answer).
Fairness ==
    /\ WF_vars(Tick)
    /\ \A r \in Runs : \A k \in SlotBound(r) : WF_vars(Expire(r, k))

LiveSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Invariants, named as model.INVARIANTS.                                  *)

SlotPairs == {<<r, k>> \in Runs \X Nat : k \in Slots(r)}

TypeOK ==
    /\ now \in 0 .. MaxTime
    /\ crashes \in 0 .. MaxCrashes
    /\ \A r \in Runs : runs[r].phase \in
         {"idle", "running", "in_effect", "applied", "paused", "stopped", "done", "cancelled"}
    /\ \A i \in Resumers : resumers[i].phase \in {"idle", "read"}

\* resume.consume.at-most-once
AtMostOnceConsumption ==
    \A r \in Runs : \A k \in Slots(r) : runs[r].slots[k].consumes <= 1

\* expiry.no-consume-after (lifecycle.inv_consumed_before_expiry)
NoConsumeAtOrAfterExpiry ==
    \A r \in Runs : \A k \in Slots(r) :
        LET ps == runs[r].slots[k].state
        IN IF ps.phase # "consumed"
           THEN ps.consumed_at = NoTime /\ ps.response_digest = NoDigest
           ELSE /\ ps.consumed_at # NoTime
                /\ ps.consumed_at < ps.expires_at
                /\ ps.response_digest # NoDigest

\* turn.resumable.earned (lifecycle.inv_resumable_has_turn)
ResumableHasTurn ==
    \A r \in Runs : \A k \in Slots(r) :
        runs[r].slots[k].state.phase = "resumable" => runs[r].slots[k].state.turn_recorded

\* effect.at-most-once
EffectsAtMostOnce ==
    \A r \in Runs : \A j \in DOMAIN runs[r].counts : runs[r].counts[j] <= 1

\* resume.unknown-outcome.blocks: a run continues only with no effect in doubt at its step
NoResumeWhileUnknown ==
    \A r \in Runs : runs[r].phase = "running" => runs[r].journal[runs[r].pc] # "started"

\* lifecycle.states: a paused run has pause points at its current step
PausedRunHasPausePoints ==
    \A r \in Runs : runs[r].phase = "paused" =>
        \E k \in Slots(r) : runs[r].slots[k].pc = runs[r].pc

RECURSIVE CancelledAbove(_)
CancelledAbove(r) ==
    runs[r].phase = "cancelled" \/ (Parents[r] # 0 /\ CancelledAbove(Parents[r]))

\* cancel.propagates: no live pause under a cancelled run or a cancelled ancestor
CancelPropagated ==
    \A r \in Runs : \A k \in Slots(r) :
        ~(CancelledAbove(r) /\ runs[r].slots[k].state.phase \in Live)

\* lifecycle.terminal.absorbing (model.terminal_absorbing), an action property
TerminalAbsorbing ==
    [][\A r \in Runs : \A k \in Slots(r) :
          runs[r].slots[k].state.phase \in Terminal =>
              runs'[r].slots[k].state = runs[r].slots[k].state]_vars

\* Liveness under Fairness: every pause that falls due within the modelled time
\* horizon is eventually consumed, expired or cancelled (expiry.transition,
\* race.decided-once).  (A pause taken so late that it falls due after MaxTime
\* is outside the horizon: the bounded clock never reaches its expiry.)
SlotState(r, k) == IF k \in Slots(r) THEN runs[r].slots[k].state ELSE NoPause

EveryPauseSettles ==
    \A r \in Runs : \A k \in SlotBound(r) :
        (SlotState(r, k).phase \in Live /\ SlotState(r, k).expires_at <= MaxTime)
        ~> (SlotState(r, k).phase \in Terminal)

=============================================================================
