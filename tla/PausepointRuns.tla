--------------------------- MODULE PausepointRuns ---------------------------
(***************************************************************************)
(* The run level: owned runs driven by several processes on one store.    *)
(* Servers start runs, answer their questions and continue them, cancel    *)
(* them; restarters take over runs whose driver stopped.  Whoever drives a *)
(* run owns it under a lease and an epoch; every run write is a row of the *)
(* run table (reference/pausepoint/core/runs.py) conditional on the        *)
(* writer's epoch (a fencing token), and the effect journal's start is a   *)
(* conditional insert under the epoch.  Processes crash (their memory is   *)
(* lost, their leases run out), a store write fails (the driver releases   *)
(* the run), a continuation arrives late or twice, a cancel races an       *)
(* effect in flight, a child's start races its parent's cancel.            *)
(*                                                                         *)
(* This is the spec of reference/pausepoint/system/runmodel.py, in         *)
(* lockstep with it (tla/manifest.json, `pausepoint check`) as             *)
(* Pausepoint.tla is with model.py.  Action and property names are         *)
(* runmodel's; runs, processes and steps are numbered from 1, 0 is none.   *)
(*                                                                         *)
(* Abstractions (runmodel.py's docstring says the same): a pause's insert, *)
(* its turn record and the run's suspend are one fenced write; an effect's *)
(* progress write and its journal's finish are one write; a lease runs out *)
(* only while its owner is not inside an effect (an effect runs within its *)
(* lease), and the journal's start needs a live lease; a cancel reaches    *)
(* one level of children.                                                  *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Scripts,        \* Scripts[r]: run r's step kinds, "effect", "ask" or "end"
    Parents,        \* Parents[r]: r's parent run, 0 for a top-level run
    NServers,       \* processes 1 .. NServers are servers
    NRestarters,    \* the next NRestarters processes are restarters
    MaxCrashes,     \* crash budget
    MaxStoreFails,  \* store-failure budget
    MaxStalls,      \* how often a live owner's lease may run out (it stalls)
    SeededBugs      \* {} for the contract; runmodel.SEEDED_BUGS names the others

VARIABLES store, procs, crashes, storefails, stalls
vars == <<store, procs, crashes, storefails, stalls>>

Runs == 1 .. Len(Scripts)
Servers == 1 .. NServers
Restarters == NServers + 1 .. NServers + NRestarters
Procs == 1 .. NServers + NRestarters
Steps(r) == 1 .. Len(Scripts[r])
Seeded(b) == b \in SeededBugs

LiveRecovery == {"paused", "unknown", "resumable"}
Settled == {"paused", "done", "cancelling", "cancelled"}
Driving == {"drive", "checked", "in_effect", "applied", "recovering"}
CancelledOrCancelling == {"cancelling", "cancelled"}

Idle == [phase |-> "idle", run |-> 0, epoch |-> 0, pc |-> 0, late |-> FALSE]
P(phase, r, e, pc) == [phase |-> phase, run |-> r, epoch |-> e, pc |-> pc, late |-> FALSE]

Init ==
    /\ store = [r \in Runs |->
                 [status |-> "none", epoch |-> 0, owner |-> 0, expired |-> FALSE, step |-> 1,
                  journal |-> [j \in Steps(r) |-> [st |-> "none", ep |-> 0]],
                  counts |-> [j \in Steps(r) |-> 0],
                  asks |-> [j \in Steps(r) |-> "none"],
                  recov |-> [j \in Steps(r) |-> <<>>],
                  late |-> FALSE]]
    /\ procs = [p \in Procs |-> Idle]
    /\ crashes = 0 /\ storefails = 0 /\ stalls = 0

-----------------------------------------------------------------------------
(* The run table's rows (run.lifecycle.table), on a stored row: each is    *)
(* enabled when the table accepts the event.  Taking a run over (start,    *)
(* recover, continue, cancel) increases its epoch; an owner's write needs  *)
(* its epoch (run.ownership.fencing).                                      *)

Own(run, p) == [run EXCEPT !.status = "running", !.epoch = @ + 1, !.owner = p,
                           !.expired = FALSE]
CanRecover(run, p) ==
    run.status = "running" /\ IF run.owner \in {0, p} THEN TRUE ELSE run.expired
    \* run.ownership.lease
Fenced(run, e, from) == run.status = from /\ run.epoch = e
Progress(run) == [run EXCEPT !.expired = FALSE]                        \* renews the lease
Let(run, status) == [run EXCEPT !.status = status, !.owner = 0, !.expired = FALSE]
CanCancel(run) == run.status \in {"running", "paused", "cancelling"}
CancellerStopped(run) ==
    /\ run.status = "cancelling"
    /\ procs[run.owner].phase \notin {"cancel", "cancel_scanned"}
Cancelling(run, p) == [run EXCEPT !.status = "cancelling", !.epoch = @ + 1, !.owner = p,
                                  !.expired = FALSE]

SetProc(p, x) == procs' = [procs EXCEPT ![p] = x]
Lost(p) == /\ SetProc(p, Idle)                   \* the driver lost the run: it writes nothing
           /\ UNCHANGED <<store, crashes, storefails, stalls>>

-----------------------------------------------------------------------------
(* Starting a run: a child atomically with the check of its parent         *)
(* (run.child.cancelling-parent).                                          *)

StartRun(p, r) ==
    /\ p \in Servers /\ procs[p] = Idle /\ store[r].status = "none"
    /\ IF Parents[r] = 0 THEN TRUE
       ELSE store[Parents[r]].status \notin {"none"} \cup CancelledOrCancelling
    /\ IF Parents[r] # 0 /\ Seeded("child_start_racy")
       THEN /\ SetProc(p, P("starting", r, 0, 0))      \* read the parent; create later
            /\ UNCHANGED store
       ELSE /\ store' = [store EXCEPT ![r] = Own(@, p)]
            /\ SetProc(p, P("drive", r, 1, 1))
    /\ UNCHANGED <<crashes, storefails, stalls>>

StartCreate(p) ==
    LET r == procs[p].run
    IN /\ procs[p].phase = "starting"
       /\ IF store[r].status = "none"
          THEN /\ store' = [store EXCEPT ![r] = Own(@, p)]
               /\ SetProc(p, P("drive", r, 1, 1))
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

-----------------------------------------------------------------------------
(* Driving: the owner's steps.                                             *)

\* end: finish; ask: open the step's pause and suspend (the run is released);
\* effect: journalled finished -> move past it; not journalled -> the journal's
\* start, a conditional insert under the epoch and a live lease; journalled
\* started by an older epoch -> its driver died inside it: open a recovery pause
\* (reusing a live one, effect.unknown-outcome); otherwise the run was lost.
Drive(p) ==
    LET x == procs[p]
        r == x.run
        j == x.pc
        run == store[r]
        entry == run.journal[j]
        live == {k \in 1 .. Len(run.recov[j]) : run.recov[j][k] \in LiveRecovery}
    IN /\ x.phase = "drive"
       /\ CASE Scripts[r][j] = "end" ->
                 IF Fenced(run, x.epoch, "running")
                 THEN /\ store' = [store EXCEPT ![r] = Let(run, "done")]
                      /\ SetProc(p, Idle)
                      /\ UNCHANGED <<crashes, storefails, stalls>>
                 ELSE Lost(p)
            [] Scripts[r][j] = "ask" ->
                 IF Fenced(run, x.epoch, "running")
                 THEN /\ store' = [store EXCEPT ![r] =
                                     [Let(run, "paused") EXCEPT !.step = j,
                                        !.asks[j] = IF @ = "none" THEN "live" ELSE @]]
                      /\ SetProc(p, Idle)
                      /\ UNCHANGED <<crashes, storefails, stalls>>
                 ELSE Lost(p)
            [] entry.st = "finished" ->
                 IF Fenced(run, x.epoch, "running")
                 THEN /\ store' = [store EXCEPT ![r] = [Progress(run) EXCEPT !.step = j + 1]]
                      /\ SetProc(p, [x EXCEPT !.pc = j + 1])
                      /\ UNCHANGED <<crashes, storefails, stalls>>
                 ELSE Lost(p)
            [] entry.st = "none" ->
                 IF Seeded("journal_upsert")
                 THEN /\ SetProc(p, [x EXCEPT !.phase = "checked"])   \* read; upsert later
                      /\ UNCHANGED <<store, crashes, storefails, stalls>>
                 ELSE IF Fenced(run, x.epoch, "running") /\ ~run.expired
                 THEN /\ store' = [store EXCEPT ![r].journal[j] = [st |-> "started",
                                                                   ep |-> x.epoch]]
                      /\ SetProc(p, [x EXCEPT !.phase = "in_effect", !.late = FALSE])
                      /\ UNCHANGED <<crashes, storefails, stalls>>
                 ELSE Lost(p)
            [] OTHER ->   \* started
                 IF Seeded("recover_newer")
                    \/ (entry.ep < x.epoch /\ Fenced(run, x.epoch, "running"))
                 THEN /\ store' = [store EXCEPT ![r].recov[j] =
                                     IF live = {} \/ Seeded("recovery_duplicates")
                                     THEN Append(@, "paused") ELSE @]
                      /\ SetProc(p, [x EXCEPT !.phase = "recovering"])
                      /\ UNCHANGED <<crashes, storefails, stalls>>
                 ELSE Lost(p)

\* Seeded bug journal_upsert only: the journal's start written unconditionally.
JournalUpsert(p) ==
    LET x == procs[p]
    IN /\ x.phase = "checked"
       /\ store' = [store EXCEPT ![x.run].journal[x.pc] = [st |-> "started", ep |-> x.epoch]]
       /\ SetProc(p, [x EXCEPT !.phase = "in_effect",
                               !.late = store[x.run].status \in CancelledOrCancelling])
       /\ UNCHANGED <<crashes, storefails, stalls>>

\* The world changes: the effect's count goes up by one.
ApplyEffect(p) ==
    LET x == procs[p]
    IN /\ x.phase = "in_effect"
       /\ store' = [store EXCEPT ![x.run].counts[x.pc] = @ + 1,
                                 ![x.run].late = @ \/ x.late]
       /\ SetProc(p, [x EXCEPT !.phase = "applied"])
       /\ UNCHANGED <<crashes, storefails, stalls>>

\* Record the progress (fenced, renewing the lease) and journal the effect finished.
FinishEffect(p) ==
    LET x == procs[p]
        r == x.run
        run == store[r]
        after(new) == [new EXCEPT !.journal[x.pc].st = "finished", !.step = x.pc + 1]
    IN /\ x.phase = "applied"
       /\ IF Seeded("unfenced_progress")      \* the whole row written back as the driver knows it
          THEN /\ store' = [store EXCEPT ![r] =
                              after([run EXCEPT !.status = "running", !.epoch = x.epoch,
                                                !.owner = p, !.expired = FALSE])]
               /\ SetProc(p, P("drive", r, x.epoch, x.pc + 1))
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE IF Fenced(run, x.epoch, "running")
          THEN /\ store' = [store EXCEPT ![r] = after(Progress(run))]
               /\ SetProc(p, P("drive", r, x.epoch, x.pc + 1))
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

\* The recovery pause opened (or found live) is marked unknown_outcome, its turn
\* recorded, and the run suspends on it (fenced).
MarkRecovery(p) ==
    LET x == procs[p]
        r == x.run
        j == x.pc
        run == store[r]
        live == {k \in 1 .. Len(run.recov[j]) : run.recov[j][k] \in LiveRecovery}
        k == CHOOSE k \in live : \A i \in live : i <= k
    IN /\ x.phase = "recovering"
       /\ IF Fenced(run, x.epoch, "running") /\ live # {}
          THEN /\ store' = [store EXCEPT ![r] =
                              [Let(run, "paused") EXCEPT !.step = j,
                                 !.recov[j][k] = IF @ = "paused" THEN "unknown" ELSE @]]
               /\ SetProc(p, Idle)
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

\* A store write of the driver fails (a brief store failure): it releases the run,
\* which stays running for a restart (run.store-failure.recoverable).
StoreFail(p) ==
    LET x == procs[p]
        run == store[x.run]
    IN /\ x.phase = "drive"
       /\ storefails < MaxStoreFails
       /\ storefails' = storefails + 1
       /\ IF Fenced(run, x.epoch, "running")
          THEN /\ store' = [store EXCEPT ![x.run] =
                              IF Seeded("store_failure_errors") THEN Let(run, "error")
                              ELSE Let(run, "running")]
               /\ SetProc(p, Idle)
          ELSE /\ SetProc(p, Idle)
               /\ UNCHANGED store
       /\ UNCHANGED <<crashes, stalls>>

-----------------------------------------------------------------------------
(* Restart, leases, crashes.                                               *)

\* A restarter takes over a running run whose lease is free: released, run out,
\* or its own from before its crash (run.ownership.lease, run.restart.concurrent);
\* or a cancelling run whose canceller stopped (its lease runs out once it is not
\* cancelling), to finish the cancel under a new epoch.
Recover(p, r) ==
    /\ p \in Restarters /\ procs[p] = Idle
    /\ \/ /\ CanRecover(store[r], p)
          /\ store' = [store EXCEPT ![r] = Own(@, p)]
          /\ SetProc(p, P("drive", r, store[r].epoch + 1, store[r].step))
       \/ /\ CancellerStopped(store[r])
          /\ store' = [store EXCEPT ![r] = Cancelling(@, p)]
          /\ SetProc(p, P("cancel", r, store[r].epoch + 1, 0))
    /\ UNCHANGED <<crashes, storefails, stalls>>

\* The owner's lease runs out: it died (or lost the run), or -- within the stall
\* budget -- it stalls between writes while alive; never inside an effect.
LeaseExpire(r) ==
    LET run == store[r]
        own == procs[run.owner]
        alive == own.run = r /\ own.epoch = run.epoch /\ own.phase \in Driving
    IN /\ run.status = "running" /\ run.owner # 0 /\ ~run.expired
       /\ ~(alive /\ (own.phase = "in_effect" \/ stalls >= MaxStalls))
       /\ store' = [store EXCEPT ![r].expired = TRUE]
       /\ stalls' = IF alive THEN stalls + 1 ELSE stalls
       /\ UNCHANGED <<procs, crashes, storefails>>

\* A process dies and comes back under its name with nothing in memory.
Crash(p) ==
    /\ crashes < MaxCrashes /\ procs[p] # Idle
    /\ crashes' = crashes + 1
    /\ SetProc(p, Idle)
    /\ UNCHANGED <<store, storefails, stalls>>

-----------------------------------------------------------------------------
(* Answering and continuing.                                               *)

\* A server consumes the live pause of ask step j, to continue the run from it.
Answer(p, r, j) ==
    /\ p \in Servers /\ procs[p] = Idle /\ store[r].asks[j] = "live"
    /\ store' = [store EXCEPT ![r].asks[j] = "consumed"]
    /\ SetProc(p, P("cont", r, 0, j))
    /\ UNCHANGED <<crashes, storefails, stalls>>

\* A continuation of an answered pause arrives again or late.
Redeliver(p, r, j) ==
    /\ p \in Servers /\ procs[p] = Idle /\ store[r].asks[j] = "consumed"
    /\ SetProc(p, P("cont", r, 0, j))
    /\ UNCHANGED <<store, crashes, storefails, stalls>>

\* An operator settles the effect in doubt truthfully; the recovery pause becomes
\* resumable (effect.reconcile).
Reconcile(r, j, k) ==
    /\ k \in 1 .. Len(store[r].recov[j]) /\ store[r].recov[j][k] = "unknown"
    /\ store' = [store EXCEPT ![r].journal[j] =
                                IF store[r].counts[j] > 0 THEN [@ EXCEPT !.st = "finished"]
                                ELSE [st |-> "none", ep |-> 0],
                              ![r].recov[j][k] = "resumable"]
    /\ UNCHANGED <<procs, crashes, storefails, stalls>>

AnswerRecovery(p, r, j, k) ==
    /\ p \in Servers /\ procs[p] = Idle
    /\ k \in 1 .. Len(store[r].recov[j]) /\ store[r].recov[j][k] = "resumable"
    /\ store' = [store EXCEPT ![r].recov[j][k] = "consumed"]
    /\ SetProc(p, P("cont", r, 0, j))
    /\ UNCHANGED <<crashes, storefails, stalls>>

\* The continuation takes the paused run over only if its pause belongs to the
\* step the run is paused at (run.continuation.belongs-to-step).
Continue(p) ==
    LET x == procs[p]
        r == x.run
        run == store[r]
        at == IF Seeded("stale_continuation") THEN run.step ELSE x.pc
        nxt == IF Scripts[r][at] = "ask" THEN at + 1 ELSE at
    IN /\ x.phase = "cont"
       /\ IF run.status = "paused" /\ run.step = at
          THEN /\ store' = [store EXCEPT ![r] = [Own(run, p) EXCEPT !.step = nxt]]
               /\ SetProc(p, P("drive", r, run.epoch + 1, nxt))
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

-----------------------------------------------------------------------------
(* Cancel: the canceller takes the run over (a new epoch fences its driver, *)
(* run.cancel.in-flight), cancels its pauses and its started children, and *)
(* ends them; a run that ended is refused (run.cancel.finished).           *)

CancelPauses(run) ==
    [run EXCEPT !.asks = [j \in DOMAIN @ |-> IF @[j] = "live" THEN "cancelled" ELSE @[j]],
                !.recov = [j \in DOMAIN @ |->
                             [k \in DOMAIN @[j] |->
                                IF @[j][k] \in LiveRecovery THEN "cancelled" ELSE @[j][k]]]]

CancelBegin(p, r) ==
    /\ p \in Servers /\ procs[p] = Idle
    /\ CanCancel(store[r])
    /\ store[r].status = "cancelling" =>
         procs[store[r].owner].phase \notin {"cancel", "cancel_scanned"}   \* a retried cancel
    /\ store' = [store EXCEPT ![r] = Cancelling(@, p)]
    /\ SetProc(p, P("cancel", r, store[r].epoch + 1, 0))
    /\ UNCHANGED <<crashes, storefails, stalls>>

CancelScan(p) ==
    LET x == procs[p]
        r == x.run
    IN /\ x.phase = "cancel"
       /\ IF store[r].epoch = x.epoch
          THEN /\ store' = [c \in Runs |->
                              IF c = r THEN CancelPauses(store[c])
                              ELSE IF Parents[c] = r /\ CanCancel(store[c])
                              THEN CancelPauses(Cancelling(store[c], p))
                              ELSE store[c]]
               /\ SetProc(p, [x EXCEPT !.phase = "cancel_scanned"])
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

CancelFinish(p) ==
    LET x == procs[p]
        r == x.run
    IN /\ x.phase = "cancel_scanned"
       /\ IF Fenced(store[r], x.epoch, "cancelling")
          THEN /\ store' = [c \in Runs |->
                              IF c = r \/ (Parents[c] = r /\ store[c].owner = p
                                           /\ store[c].status = "cancelling")
                              THEN Let(store[c], "cancelled")
                              ELSE store[c]]
               /\ SetProc(p, Idle)
               /\ UNCHANGED <<crashes, storefails, stalls>>
          ELSE Lost(p)

-----------------------------------------------------------------------------

ProcStep(p) ==
    \/ StartCreate(p) \/ Drive(p) \/ JournalUpsert(p) \/ ApplyEffect(p) \/ FinishEffect(p)
    \/ MarkRecovery(p) \/ Continue(p) \/ CancelScan(p) \/ CancelFinish(p)

Next ==
    \/ \E p \in Procs :
        \/ ProcStep(p) \/ StoreFail(p) \/ Crash(p)
        \/ \E r \in Runs :
            \/ StartRun(p, r) \/ Recover(p, r) \/ CancelBegin(p, r)
            \/ \E j \in Steps(r) :
                \/ Answer(p, r, j) \/ Redeliver(p, r, j)
                \/ \E k \in 1 .. Len(store[r].recov[j]) : AnswerRecovery(p, r, j, k)
    \/ \E r \in Runs :
        \/ LeaseExpire(r)
        \/ \E j \in Steps(r) : \E k \in 1 .. Len(store[r].recov[j]) : Reconcile(r, j, k)

Spec == Init /\ [][Next]_vars

\* Every process goes on with what it does, a lease runs out once its owner stopped,
\* a restarter takes over a run whose lease is free (or whose canceller stopped);
\* nobody is obliged to answer, cancel, crash or fail.
Fairness ==
    /\ \A p \in Procs : WF_vars(ProcStep(p))
    /\ \A r \in Runs : WF_vars(LeaseExpire(r))
    /\ \A p \in Restarters : \A r \in Runs : WF_vars(Recover(p, r))

LiveSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Invariants, named as runmodel.INVARIANTS; each names its clauses.       *)

\* run.lifecycle.table
RunTypeOK ==
    /\ \A r \in Runs : store[r].status \in
         {"none", "running", "paused", "done", "error", "cancelling", "cancelled"}
    /\ \A r \in Runs : store[r].expired => store[r].status = "running"
    /\ crashes <= MaxCrashes /\ storefails <= MaxStoreFails /\ stalls <= MaxStalls

\* effect.at-most-once, run.restart.concurrent, run.ownership.fencing
RunEffectsAtMostOnce ==
    \A r \in Runs : \A j \in Steps(r) : store[r].counts[j] <= 1

\* run.continuation.belongs-to-step, resume.continuation.recorded-turn: neither the
\* stored run nor any driver is past an ask whose pause was not consumed
RunContinuesOnlyWhenAnswered ==
    \A r \in Runs : \A j \in Steps(r) :
        (Scripts[r][j] = "ask" /\ store[r].asks[j] # "consumed") =>
            /\ store[r].step <= j
            /\ \A p \in Procs : (procs[p].run = r /\ procs[p].phase \in Driving)
                                  => procs[p].pc <= j

\* run.cancel.in-flight: no effect is applied that was journalled started after a
\* cancel of its run committed
NoEffectAfterCancel ==
    \A r \in Runs : ~store[r].late

\* run.restart.concurrent, effect.unknown-outcome: at most one live recovery pause
\* per effect in doubt
OneRecoveryPausePerEffect ==
    \A r \in Runs : \A j \in Steps(r) :
        Cardinality({k \in 1 .. Len(store[r].recov[j]) :
                       store[r].recov[j][k] \in LiveRecovery}) <= 1

\* run.ownership.fencing, effect.unknown-outcome: no live recovery pause for an
\* effect whose driver is alive inside it
NoRecoveryBesideLiveEffect ==
    \A p \in Procs :
        procs[p].phase = "in_effect" =>
            \A k \in 1 .. Len(store[procs[p].run].recov[procs[p].pc]) :
                store[procs[p].run].recov[procs[p].pc][k] \notin LiveRecovery

\* run.child.cancelling-parent, cancel.propagates: a cancelled run has no child that
\* runs, pauses or ended in error
ChildCancelledWithParent ==
    \A c \in Runs :
        (Parents[c] # 0 /\ store[Parents[c]].status = "cancelled") =>
            store[c].status \in {"none", "done", "cancelling", "cancelled"}

-----------------------------------------------------------------------------
(* Action properties, named as runmodel.ACTION_PROPERTIES.                 *)

\* run.cancel.in-flight, run.cancel.finished, run.events.single-terminal: a run that
\* ended stays as it ended, and a cancelling run only becomes cancelled
RunStatusForward ==
    [][\A r \in Runs :
          /\ store[r].status \in {"done", "error", "cancelled"} =>
               store'[r].status = store[r].status
          /\ store[r].status = "cancelling" =>
               store'[r].status \in CancelledOrCancelling]_vars

\* run.ownership.fencing: a run's epoch never goes back
EpochNeverDecreases ==
    [][\A r \in Runs : store'[r].epoch >= store[r].epoch]_vars

-----------------------------------------------------------------------------
(* Liveness under Fairness, named as runmodel.LIVENESS.                    *)

\* run.store-failure.recoverable, run.ownership.lease: every running run moves on --
\* it pauses for a person, ends done or is cancelled; a driver that stops releases
\* it or its lease runs out, and a restart takes it on
RunningRunMovesOn ==
    \A r \in Runs : (store[r].status = "running") ~> (store[r].status \in Settled)

\* run.ownership.lease, cancel.propagates: every cancel ends -- a canceller that
\* stops leaves its run cancelling, and a restart finishes the cancel
CancellingRunEnds ==
    \A r \in Runs : (store[r].status = "cancelling") ~> (store[r].status = "cancelled")

=============================================================================
