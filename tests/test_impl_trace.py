"""Trace validation of the implementation: the reference's service and harness report what
they really do (``pausepoint.engine.tracing``), and those events, translated into the model's
actions (``pausepoint_conformance.modelcheck.impltrace``), replay against the Python model --
for ordinary runs, for crash runs (a crash inside an effect, the restart, the recovery pause
and its reconcile) and for races of resume servers sharing one store.  A broken
implementation's trace does not validate."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from pausepoint.core.errors import PausepointError
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import Harness, MemoryWorld
from pausepoint.engine.tracing import FileTrace, MemoryTrace, load_events
from pausepoint.stores import open_store
from pausepoint_conformance.modelcheck import impltrace
from pausepoint_conformance.modelcheck.impltrace import Untranslatable, translate, validate_events

TTL = 3
S = {"session_id": "s", "scope": "sc"}


def eff(key: str, fault: str | None = None) -> dict[str, Any]:
    return {"op": "effect", "key": key, **({"fault": fault} if fault else {})}


def ask(*names: str, **kw: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"op": "interrupt", "payload": {}, **kw}
    step.update({"names": list(names)} if len(names) > 1 else {"name": names[0]})
    return step


END = {"op": "end"}


def traced(url: str = "memory:") -> tuple[Harness, MemoryTrace, ManualClock]:
    clock = ManualClock(0)
    h = Harness.open(url, clock=clock, ttl_ms=TTL)
    trace = MemoryTrace(clock)
    h.traced(trace)
    return h, trace, clock


def assert_valid(trace: MemoryTrace) -> None:
    v = validate_events(trace.events)
    assert v.ok, (v.message, translate(trace.events)[2:])
    assert v.lines == len(translate(trace.events))


def test_an_ordinary_run_validates() -> None:
    h, trace, clock = traced()
    rep = h.start([eff("a"), ask("approve"), eff("b"), END], run_id="r1", **S)
    (p,) = rep.pauses
    clock.advance(1)
    assert h.resume(p.token, {"approved": True}, **S).status == "done"
    assert h.resume(p.token, {"approved": True}, **S).replayed
    with pytest.raises(PausepointError):
        h.resume(p.token, {"approved": False}, **S)  # a conflict: in the model too
    with pytest.raises(PausepointError):
        h.resume(p.token, {"approved": True}, session_id="other", scope="sc")  # not modelled
    assert_valid(trace)
    actions = [x["action"] for x in translate(trace.events)[2:]]
    assert actions.count("ResumeCommit") == 3 and "Tick" in actions


def test_several_questions_lineage_expiry_and_cancel_validate() -> None:
    h, trace, clock = traced()
    rep = h.start([ask("approve", "confirm"), eff("b"), END], run_id="p", **S)
    first, second = rep.pauses
    h.start([ask("choose", checkpoint_write="fail", fail_checkpoint=True), END],
            run_id="c", parent_run_id="p", **S)
    h.resume(first.token, {"approved": True}, **S)
    clock.advance(TTL)
    h.expire_due()
    with pytest.raises(PausepointError):
        h.resume(second.token, {"approved": True}, **S)
    h.start([ask("approve"), END], run_id="q", **S)
    h.cancel("q")
    h.cancel("q")  # already cancelled: nothing happens, nothing is reported
    assert_valid(trace)
    actions = [x["action"] for x in translate(trace.events)[2:]]
    assert {"Expire", "CancelBegin", "CancelFinish", "RecordTurn"} <= set(actions)


@pytest.mark.parametrize("fault", ["crash_before_apply", "crash_after_apply"])
def test_a_crash_run_validates(fault: str, tmp_path: Path) -> None:
    """A crash inside an effect, the restart on a durable store, the recovery pause, its
    reconcile (the truth: applied or not) and the resume that continues the run."""
    h, trace, _clock = traced(f"sqlite:{tmp_path / 'crash.db'}")
    rep = h.start([eff("a", fault), eff("b"), END], run_id="r1", **S)
    assert rep.status == "stopped"
    h.restart()
    (rec,) = h.published("r1")
    h.reconcile(rec.interrupt_id, "applied" if fault == "crash_after_apply" else "not_applied")
    assert h.resume(rec.token, {}, **S).status == "done"
    assert_valid(trace)
    actions = [x["action"] for x in translate(trace.events)[2:]]
    assert {"Crash", "Restart", "Reconcile"} <= set(actions)


def test_a_crash_run_of_several_processes_validates(tmp_path: Path) -> None:
    """Each 'process' -- a harness opened on the same file, the previous one dropped as dead
    -- appends to one event file; the file validates as one trace."""
    url, log = f"sqlite:{tmp_path / 'p.db'}", tmp_path / "events.ndjson"
    clock, world = ManualClock(0), MemoryWorld()

    def process() -> Harness:
        h = Harness.open(url, clock=clock, ttl_ms=TTL, world=world)
        return h.traced(FileTrace(clock, log))

    first = process()
    first.start([eff("a"), ask("approve"), eff("b", "crash_after_apply"), END], run_id="r1",
                **S)
    (p,) = first.published("r1")
    first.resume(p.token, {"approved": True}, **S)  # dies applying b
    second = process()
    second.trace.emit("crash")  # the file's own record of the death it survived
    second.restart()
    (rec,) = second.published("r1")
    second.reconcile(rec.interrupt_id, "applied")
    second.resume(rec.token, {}, **S)
    events = load_events(log.read_text())
    assert [e["op"] for e in events].count("crash") == 2
    v = validate_events([e for i, e in enumerate(events)
                         if not (e["op"] == "crash" and i and events[i - 1]["op"] == "crash")])
    assert v.ok, v.message
    # the command line: the first process's log alone (a prefix, as a killed one leaves)
    first_only = tmp_path / "first.ndjson"
    lines = log.read_text().splitlines(keepends=True)
    first_only.write_text("".join(lines[:[json.loads(x).get("op") for x in lines].index(
        "crash") + 1]))
    assert impltrace.main([str(first_only), str(tmp_path / "trace.ndjson")]) == 0
    assert (tmp_path / "trace.ndjson").read_text().startswith('{"format":"pausepoint-trace/1"')
    assert impltrace.main([str(tmp_path / "missing.ndjson")]) == 2


def race(trace: MemoryTrace, servers: list[Harness], token: str,
         responses: list[Any]) -> list[Any]:
    results: list[Any] = [None] * len(servers)
    barrier = threading.Barrier(len(servers))

    def go(i: int) -> None:
        barrier.wait()
        try:
            results[i] = servers[i].resume(token, responses[i], **S)
        except PausepointError as exc:
            results[i] = exc.code.value
    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(servers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def servers_for(h: Harness, n: int, url: str, trace: MemoryTrace) -> list[Harness]:
    return [Harness(open_bundle=lambda: open_store(url), signer=h.signer, clock=h.clock,
                    world=h.world, ttl_ms=TTL, interactions=h.interactions,
                    durable_restart=True).traced(trace) for _ in range(n)]


@pytest.mark.parametrize("same", [True, False])
def test_a_race_of_resume_servers_validates(same: bool, tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'race.db'}"
    h, trace, _clock = traced(url)
    answered = 0
    for round_ in range(3):
        rep = h.start([ask("approve"), eff("b"), END], run_id=f"r{round_}", **S)
        (p,) = rep.pauses
        responses = [{"approved": True} if same else {"approved": i % 2 == 0, "n": i}
                     for i in range(4)]
        results = race(trace, servers_for(h, 4, url, trace), p.token, responses)
        assert sum(1 for r in results if not isinstance(r, str) and not r.replayed) == 1
        # a resume the busy store refused (SQLite's lock, under load) never reached a commit
        answered += sum(1 for r in results if r != "store_unavailable")
    assert_valid(trace)
    commits = [x for x in translate(trace.events)[2:] if x["action"] == "ResumeCommit"]
    assert len(commits) >= answered >= 3  # one winner a round at least


def test_a_double_consume_does_not_validate(tmp_path: Path) -> None:
    """The version-blind ledger of tests/broken/double_consume: two resumes that read the
    same version both commit a consume -- the model says the second must read again."""
    h, trace, _clock = traced()
    rep = h.start([ask("approve"), END], run_id="r1", **S)
    (p,) = rep.pauses
    ledger = h.service.ledger
    real_get, real_transition = ledger.get, ledger.transition

    def blind(interrupt_id: str, expected_version: int, new: Any, result: Any = None) -> bool:
        current = real_get(interrupt_id)  # whatever version the row has: no compare-and-set
        return bool(real_transition(interrupt_id, current.version, new, result))
    stale = real_get(p.interrupt_id)  # both resumes read the row before either commits
    ledger.transition = blind
    ledger.get = lambda iid: stale if iid == p.interrupt_id else real_get(iid)
    h.resume(p.token, {"approved": True}, **S)
    h.resume(p.token, {"approved": False}, **S)  # reads the stale row, consumes again
    v = validate_events(trace.events)
    # the second read reports the version the first consume had already moved on from
    assert not v.ok and "ResumeRead" in v.message, v.message
    without_versions = [{k: x for k, x in e.items() if k != "version"} for e in trace.events]
    v = validate_events(without_versions)  # and without it, its commit is refused
    assert not v.ok and "ResumeCommit" in v.message, v.message


def test_a_run_the_model_cannot_describe_is_said_so() -> None:
    h, trace, _clock = traced()
    h.start([{"op": "gate", "amount": 1, "allow_up_to": 10, "deny_over": 100}, END],
            run_id="g", **S)
    with pytest.raises(Untranslatable):
        translate(trace.events)


def test_tracing_is_off_by_default() -> None:
    h = Harness.open("memory:", clock=ManualClock(0), ttl_ms=TTL)
    assert not hasattr(h.trace, "events") and not hasattr(h.service.trace, "events")
    assert attrs.has(type(h.service.machine))


COMMITS = frozenset({"runs.create", "unit_of_work.commit", "world.apply", "ledger.transition"})


def bounded(case: Any) -> bool:
    """The crash cases where an event and its write can part: killed right after a write that
    commits by itself (between the commit and the log's confirmation), and right before a
    unit's commit (its events already written, tentatively)."""
    return case.first is None and case.op in COMMITS and (
        case.when == "after" or case.op == "unit_of_work.commit")


def test_every_trace_of_a_crash_run_validates(tmp_path: Path) -> None:
    """``faults.crash --trace`` on SQLite, every case where the process dies between a write
    and its event: each process of a case (the one killed with SIGKILL, the one that restarts)
    appends to the case's event log, and every log validates against the model.  Units the
    log never confirmed are taken whole by some cases and left out by others, as the restart's
    reads show."""
    from pausepoint_conformance.faults.crash import enumerate_crashes, sqlite_factory

    report = enumerate_crashes(sqlite_factory, str(tmp_path / "work"), jobs=2, only=bounded,
                               trace_dir=str(tmp_path))
    assert len(report.results) >= 15 and not report.violations
    assert {r.case.op for r in report.results} == COMMITS
    assert [r.trace for r in report.results] == ["valid"] * len(report.results), [
        (r.case, r.trace) for r in report.results if r.trace != "valid"]
    taken = skipped = 0
    for log in sorted(tmp_path.glob("*.events.ndjson")):
        records = translate(load_events(log.read_text()))
        v = validate_events(load_events(log.read_text()))
        doubt = {str(x["unit"]) for x in records if x.get("in_doubt")}
        skipped += len(v.skipped)
        taken += len(doubt - v.skipped)
        assert '"op":"crash"' in log.read_text()
    assert taken and skipped, (taken, skipped)


def crash_log(tmp_path: Path, case: Callable[[Any], bool], broken: str | None = None
              ) -> tuple[Any, list[dict[str, Any]]]:
    from pausepoint_conformance.faults.crash import enumerate_crashes, sqlite_factory

    report = enumerate_crashes(sqlite_factory, str(tmp_path / "work"), jobs=1, broken=broken,
                               only=case, trace_dir=str(tmp_path))
    (res,) = report.results
    (log,) = tmp_path.glob("*.events.ndjson")
    return res, load_events(log.read_text())


def ask_commit(case: Any) -> bool:
    """The commit of the scenario's ask (its pause, its turn, the run suspended): the unit
    after the first effect's (both end suspending or moving the run on)."""
    return (case.first is None and case.op == "unit_of_work.commit"
            and case.prev == "runs.replace" and 8 < case.point < 16)


def test_an_effect_applied_again_after_a_crash_does_not_validate(tmp_path: Path) -> None:
    """The forgetful journal (``crash --broken forgetful-journal``): killed right after the
    first effect applied, its restart reads the effect in doubt as never started and applies
    it again -- the model opens a recovery pause instead."""
    res, events = crash_log(tmp_path, lambda c: c.first is None and c.when == "after"
                            and c.op == "world.apply" and c.point < 10, "forgetful-journal")
    assert any("applied 2 times" in v for v in res.violations), res.violations
    assert res.trace.startswith("INVALID"), res.trace
    assert [e["op"] for e in events].count("apply") == 3  # two effects, the first twice


def test_a_unit_in_doubt_is_taken_whole_or_not_at_all(tmp_path: Path) -> None:
    """Killed right after the ask's commit (the pause, its turn and the run suspended), before
    the log confirmed it: the restart finds the run paused, so the unit happened.  Without its
    turn -- half a unit -- the same log does not validate, nor with a second consume after the
    restart read the pause consumed."""
    res, events = crash_log(tmp_path, lambda c: ask_commit(c) and c.when == "after")
    assert res.trace == "valid" and not res.violations
    doubt = [e for e in events if e.get("unit") and not any(
        x["op"] in ("confirmed", "aborted") and x["unit"] == e["unit"] for x in events)]
    assert [e["op"] for e in doubt] == ["execute", "turn"]
    half = [e for e in events if e is not doubt[1]]
    assert not validate_events(half).ok
    # the restart's resume read the pause consumed? no: it was resumable -- consumed once
    reads = [e for e in events if e["op"] == "read"]
    assert reads and reads[0]["version"] == 2
    consumed = next(i for i, e in enumerate(events) if e["op"] == "commit"
                    and e["result"] == "consumed")
    again = [*events[:consumed + 1], {**reads[0], "version": 3},
             {**events[consumed], "unit": None}, *events[consumed + 1:]]
    v = validate_events(again)  # a pause read consumed, consumed again
    assert not v.ok and "ResumeCommit" in v.message, v.message


def test_decided_traces_skip_only_whole_units_in_doubt(tmp_path: Path) -> None:
    """The decision the validator records for TLC (``skip`` on a unit's lines) is checked as
    TLC checks it: only lines in doubt, all of a unit alike."""
    from pausepoint.system import trace as tr

    _res, events = crash_log(tmp_path, lambda c: ask_commit(c) and c.when == "before")
    records = translate(events)
    v = tr.validate(records)
    assert v.ok and v.skipped  # killed before the ask's commit: it never happened
    decided = impltrace.resolved(records, v)
    assert tr.validate(decided).ok
    marked = [i for i, x in enumerate(decided) if x.get("skip")]
    assert len(marked) == 2
    split = [dict(x) for x in decided]
    split[marked[0]]["skip"] = False
    assert "not all" in tr.validate(split).message
    forged = [dict(x) for x in decided]
    forged[next(i for i, x in enumerate(forged) if x.get("action") == "ApplyEffect")][
        "skip"] = True
    assert "not in doubt" in tr.validate(forged).message
    taken = [{k: x for k, x in r.items() if k != "skip"} for r in decided]
    for i in marked:
        taken[i]["skip"] = False
    assert not tr.validate(taken).ok  # the restart asked again: the first asking did not land


def test_a_unit_reports_its_events_before_its_commit_and_confirms_them_after(
        tmp_path: Path) -> None:
    clock = ManualClock(0)
    sink = FileTrace(clock, tmp_path / "e.ndjson")

    def ops() -> list[str]:
        return [e["op"] for e in load_events((tmp_path / "e.ndjson").read_text())]

    with sink.unit() as unit:
        sink.emit("a")
        with sink.unit():  # joins the open one
            sink.emit("b")
        assert ops() == []  # nothing written before the commit
        unit.prepare()
        assert ops() == ["a", "b"]
    events = load_events((tmp_path / "e.ndjson").read_text())
    assert events[0]["unit"] == events[1]["unit"] == events[2]["unit"]
    assert ops() == ["a", "b", "confirmed"]
    with pytest.raises(RuntimeError), sink.unit():
        sink.emit("c")
        raise RuntimeError  # rolled back before its commit: never written
    assert ops() == ["a", "b", "confirmed"]
    with sink.writing("d") as w:
        assert ops()[-1] == "d"  # written before the write
        w.abort()
    assert ops()[-1] == "aborted"
    with sink.unit():
        with sink.writing("e") as w:  # inside a unit: the unit's, unless aborted
            w.abort()
        sink.emit("f")
    assert ops()[-2:] == ["f", "confirmed"]


def test_the_race_tool_writes_a_trace_that_validates(tmp_path: Path) -> None:
    """``faults.race`` with a trace: the resume servers (separate processes) and the
    orchestrator append to one event log; its reads and commits are in the store's order
    (``FileTrace.atomic`` locks the file), and it validates against the model."""
    from pausepoint_conformance.faults.race import run_races
    from pausepoint_conformance.faults.testbed import drop, fresh_sqlite, save_key
    from pausepoint_conformance.modelcheck.impltrace import judge_events

    key, log = str(tmp_path / "key"), tmp_path / "race-events.ndjson"
    save_key(key)
    spec = fresh_sqlite(str(tmp_path), "race.db")
    try:
        report = run_races(spec, key, processes=3, rounds=2, trace=str(log))
    finally:
        drop(spec)
    assert not report.violations and set(report.stats) == {"same", "differ"}
    assert judge_events(log) == "valid"
    commits = [x for x in translate(load_events(log.read_text()))[2:]
               if x["action"] == "ResumeCommit"]
    assert len(commits) >= 12
