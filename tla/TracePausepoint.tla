--------------------------- MODULE TracePausepoint ---------------------------
(***************************************************************************)
(* Trace validation: TLC checks that an NDJSON trace (format              *)
(* pausepoint-trace/1, written by reference/pausepoint/trace.py or by an   *)
(* implementation) is a behaviour of Pausepoint.  Line 1 is a header with  *)
(* the spec's constants, line 2 the Init line, then one line per action:   *)
(* {"action": A, "args": {...}, "state": {...}, "result"?: R}.  Each step  *)
(* must be the named action with those arguments, and its post-state must  *)
(* agree with every field the line records (fields are optional: an        *)
(* implementation records what it can observe).  A line that cannot be     *)
(* matched leaves TLC without a successor: "Deadlock reached" is a trace   *)
(* that does not conform; a conforming trace ends in TraceDone, and TLC's  *)
(* depth equals the number of lines after the header.                      *)
(*                                                                         *)
(* Units in doubt.  A line may carry "unit" and "in_doubt": TRUE: it       *)
(* reports a write of a unit of work whose commit the implementation's log *)
(* never confirmed (its process was killed between the commit and the      *)
(* confirmation).  The unit happened all or none of it: "skip": TRUE on    *)
(* every one of its lines says none (the validator's decision, which the   *)
(* rest of the trace must fit), and a skipped line is a step that changes  *)
(* nothing but l.  Only a line in doubt may be skipped, and only with      *)
(* every line of its unit (Python: pausepoint.system.trace.validate).      *)
(*                                                                         *)
(* Spec variable              | trace field             | Python attribute *)
(* ---------------------------+-------------------------+----------------- *)
(* now                        | state.now               | System.now       *)
(* crashes                    | state.crashes           | System.crashes   *)
(* runs[r].phase              | state.runs[r-1].phase   | RunState.phase   *)
(* runs[r].pc (1-based)       | state.runs[r-1].pc      | RunState.pc      *)
(* runs[r].journal            | state.runs[r-1].journal | RunState.journal *)
(* runs[r].counts             | state.runs[r-1].counts  | RunState.counts  *)
(* runs[r].slots[k].kind      | ...slots[k-1].kind      | Slot.kind        *)
(* runs[r].slots[k].pc        | ...slots[k-1].pc (0-b.) | Slot.pc          *)
(* runs[r].slots[k].version   | ...slots[k-1].version   | Slot.version     *)
(* runs[r].slots[k].consumes  | ...slots[k-1].consumes  | Slot.consumes    *)
(* ...slots[k].state.phase    | ...slots[k-1].phase     | Slot.state.phase *)
(* ...state.expires_at        | ...slots[k-1].expires_at| PauseState.expires_at *)
(* ...state.turn_recorded     | ...slots[k-1].turn_recorded | PauseState.turn_recorded *)
(* ...state.response_digest   | ...slots[k-1].response  | PauseState.response_digest ("" = None) *)
(* ...state.consumed_at       | ...slots[k-1].consumed_at | PauseState.consumed_at (-1 = None) *)
(* resumers[i].phase          | state.resumers[i-1].phase | Resumer.phase  *)
(* resumers[i].run (1-based,  | state.resumers[i-1].run | Resumer.run      *)
(*   0 when idle)             |   (0-based, 0 when idle)|                  *)
(* resumers[i].slot (idem)    | state.resumers[i-1].slot| Resumer.slot     *)
(* resumers[i].response       | state.resumers[i-1].response | Resumer.response *)
(* resumers[i].seen_version   | state.resumers[i-1].seen_version | Resumer.seen_version *)
(* resumers[i].binding, .told| state.resumers[i-1].binding, .told | Resumer.binding, .told *)
(* runs[r].cancel             | state.runs[r-1].cancel  | RunState.cancel  *)
(* ...slots[k].kid, .write    | ...slots[k-1].kid, .write | Slot.kid, Slot.write *)
(* ...slots[k].root (1-based) | ...slots[k-1].root (0-b.) | Slot.root      *)
(* keys.active, keys.retired  | state.active_key, state.retired | System.active_key, .retired *)
(* action argument key (Retire) | args.key (1-based)    | Labelled.args    *)
(* resumers[i].seen           | (not traced: internal)  | Resumer.seen     *)
(* action argument r, k, i    | args.run, args.slot, args.resumer (0-based) | Labelled.args *)
(* ResumeResult / "retry"     | result (ResumeCommit)   | model.commit_result *)
(* Scripts, Parents, TTL, ... | header constants        | model.Config     *)
(***************************************************************************)
EXTENDS Pausepoint, Json, TLC

CONSTANT TraceFile

Lines == ndJsonDeserialize(TraceFile)
Header == Lines[1]
Steps == [j \in 1 .. Len(Lines) - 1 |-> Lines[j + 1]]

TraceScripts == Header.constants.Scripts
TraceParents == Header.constants.Parents
TraceTTL == Header.constants.TTL
TraceMaxTime == Header.constants.MaxTime
TraceNResumers == Header.constants.NResumers
TraceResponses == {Header.constants.Responses[j] : j \in DOMAIN Header.constants.Responses}
TraceMaxCrashes == Header.constants.MaxCrashes
TraceBindings == {Header.constants.Bindings[j] : j \in DOMAIN Header.constants.Bindings}
TraceNKeys == Header.constants.NKeys
TraceSeededBugs == {Header.constants.SeededBugs[j] : j \in DOMAIN Header.constants.SeededBugs}

VARIABLE l   \* the number of trace lines (after the header) matched so far

Has(rec, f) == f \in DOMAIN rec
Opt(rec, f, v) == IF Has(rec, f) THEN rec[f] = v ELSE TRUE

SlotMatch(o, x) ==
    /\ Opt(o, "kind", x.kind)
    /\ Opt(o, "pc", x.pc - 1)
    /\ Opt(o, "version", x.version)
    /\ Opt(o, "consumes", x.consumes)
    /\ Opt(o, "phase", x.state.phase)
    /\ Opt(o, "expires_at", x.state.expires_at)
    /\ Opt(o, "turn_recorded", x.state.turn_recorded)
    /\ Opt(o, "response", x.state.response_digest)
    /\ Opt(o, "consumed_at", x.state.consumed_at)
    /\ Opt(o, "kid", x.kid)
    /\ Opt(o, "root", x.root - 1)
    /\ Opt(o, "write", x.write)

RunMatch(o, run) ==
    /\ Opt(o, "phase", run.phase)
    /\ Opt(o, "pc", run.pc - 1)
    /\ Opt(o, "journal", run.journal)
    /\ Opt(o, "counts", run.counts)
    /\ Opt(o, "cancel", run.cancel)
    /\ IF Has(o, "slots")
       THEN /\ Len(o.slots) = Len(run.slots)
            /\ \A k \in DOMAIN o.slots : SlotMatch(o.slots[k], run.slots[k])
       ELSE TRUE

ResumerMatch(o, res) ==
    /\ Opt(o, "phase", res.phase)
    /\ Opt(o, "run", IF res.phase # "idle" THEN res.run - 1 ELSE 0)
    /\ Opt(o, "slot", IF res.phase # "idle" THEN res.slot - 1 ELSE 0)
    /\ Opt(o, "response", res.response)
    /\ Opt(o, "binding", res.binding)
    /\ Opt(o, "told", res.told)
    /\ Opt(o, "seen_version", res.seen_version)

StateMatch(o, n, c, rs, ress, ks) ==
    /\ Opt(o, "now", n)
    /\ Opt(o, "crashes", c)
    /\ Opt(o, "active_key", ks.active)
    /\ IF Has(o, "retired")
       THEN {o.retired[j] : j \in DOMAIN o.retired} = ks.retired ELSE TRUE
    /\ IF Has(o, "runs")
       THEN Len(o.runs) = Len(rs) /\ \A r \in DOMAIN o.runs : RunMatch(o.runs[r], rs[r])
       ELSE TRUE
    /\ IF Has(o, "resumers")
       THEN Len(o.resumers) = Len(ress)
            /\ \A i \in DOMAIN o.resumers : ResumerMatch(o.resumers[i], ress[i])
       ELSE TRUE

Skipped(e) == Has(e, "skip") /\ e.skip = TRUE
InDoubt(e) == Has(e, "in_doubt") /\ e.in_doubt = TRUE
UnitsOf(P(_)) == {Steps[j].unit : j \in {i \in DOMAIN Steps : Has(Steps[i], "unit") /\ P(Steps[i])}}
SkippedUnits == UnitsOf(Skipped)
KeptUnits == UnitsOf(LAMBDA e : ~Skipped(e))

\* The line's skip mark is allowed: only in doubt, and alike on every line of its unit.
SkipOK(e) ==
    IF Skipped(e) THEN InDoubt(e) /\ e.unit \notin KeptUnits
    ELSE Has(e, "unit") => e.unit \notin SkippedUnits

TraceInit ==
    /\ Init
    /\ l = 1
    /\ Steps[1].action = "Init"
    /\ StateMatch(Steps[1].state, now, crashes, runs, resumers, keys)

\* The step the next line names, with its arguments (0-based in the trace).
Act(e) ==
    LET a == e.args
    IN CASE e.action = "StartRun"     -> StartRun(a.run + 1)
         [] e.action = "Execute"      -> Execute(a.run + 1)
         [] e.action = "ApplyEffect"  -> ApplyEffect(a.run + 1)
         [] e.action = "FinishEffect" -> FinishEffect(a.run + 1)
         [] e.action = "CancelBegin"  -> CancelBegin(a.run + 1)
         [] e.action = "CancelScan"   -> CancelScan(a.run + 1)
         [] e.action = "CancelFinish" -> CancelFinish(a.run + 1)
         [] e.action = "Restart"      -> Restart(a.run + 1)
         [] e.action = "Continue"     -> Continue(a.run + 1)
         [] e.action = "RecordTurn"   -> RecordTurn(a.run + 1, a.slot + 1)
         [] e.action = "RecordTurnFailed" -> RecordTurnFailed(a.run + 1, a.slot + 1)
         [] e.action = "Expire"       -> Expire(a.run + 1, a.slot + 1)
         [] e.action = "MarkUnknown"  -> MarkUnknown(a.run + 1, a.slot + 1)
         [] e.action = "Rotate"       -> Rotate
         [] e.action = "Retire"       -> Retire(a.key)
         [] e.action = "Reconcile"    -> Reconcile(a.run + 1, a.slot + 1, a.applied)
         [] e.action = "ResumeRead"   -> ResumeRead(a.resumer + 1, a.run + 1, a.slot + 1,
                                                    a.response, a.binding)
         [] e.action = "ResumeCommit" ->
              /\ IF Has(e, "result") THEN CommitResult(a.resumer + 1) = e.result ELSE TRUE
              /\ ResumeCommit(a.resumer + 1)
         [] e.action = "Tick"         -> Tick
         [] e.action = "Crash"        -> Crash
         [] OTHER                     -> FALSE

TraceNext ==
    /\ l < Len(Steps)
    /\ l' = l + 1
    /\ SkipOK(Steps[l + 1])
    /\ IF Skipped(Steps[l + 1])
       THEN UNCHANGED vars
       ELSE /\ Act(Steps[l + 1])
            /\ StateMatch(Steps[l + 1].state, now', crashes', runs', resumers', keys')

\* The whole trace matched: stay here (so only an unmatched line deadlocks).
TraceDone ==
    /\ l = Len(Steps)
    /\ UNCHANGED <<vars, l>>

TraceNext_or_Done == TraceNext \/ TraceDone

TraceSpec == TraceInit /\ [][TraceNext_or_Done]_<<vars, l>>

=============================================================================
