"""Crash injection (clauses ``durability.restart``, ``durability.token.reissue``,
``resume.consume.at-most-once``, ``effect.at-most-once``, ``effect.unknown-outcome``): a real
worker process is SIGKILLed right before and right after every write of a scripted run that
pauses, is answered and resumes, with an effect on each side of the pause; a fresh process
restarts the harness and finishes the run; the durable stores, the world, the trace and the
person's inbox are then checked (see :mod:`pausepoint_conformance.faults.crash`).

On SQLite and on PostgreSQL.  Two deliberately broken variants show the checks bite.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pausepoint_conformance.adapters.loader import make_adapter
from pausepoint_conformance.faults.crash import (
    AdapterCrashReport,
    Case,
    CrashReport,
    _run_worker,
    cancel_from,
    crash_adapter,
    dry_run,
    enumerate_crashes,
    postgres_factory,
    prepare,
    read_jsonl,
    sqlite_factory,
)
from pausepoint_conformance.faults.crash import main as crash_main
from pausepoint_conformance.faults.testbed import drop
from pg import pg_dsn


def _report(report: CrashReport) -> str:
    doubt = sum(1 for r in report.results if r.in_doubt)
    return (f"{report.store}: {report.cases} crash cases over {len(report.writes)} writes "
            f"({doubt} with an effect in doubt), {len(report.violations)} violations")


def _check_every_boundary(report: CrashReport) -> None:
    # every write of the scenario, killed before and after it: pause and resume both covered
    assert report.cases == 2 * len(report.writes)
    for op in ("ledger.issue", "checkpoints.write", "world.apply", "effects.start",
               "effects.finish", "ledger.set_result", "runs.create", "runs.replace"):
        assert op in report.writes, report.writes
    assert sum(1 for w in report.writes if w == "ledger.transition") == 2  # turn + consume
    assert all(r.died for r in report.results), [r.case for r in report.results if not r.died]
    assert any(r.in_doubt for r in report.results)  # unknown outcomes were exercised
    assert report.violations == [], "\n".join(report.violations)


def test_crash_at_every_boundary_sqlite(tmp_path: Path) -> None:
    report = enumerate_crashes(sqlite_factory, str(tmp_path))
    print(_report(report))
    _check_every_boundary(report)


def test_crash_at_every_boundary_postgres(tmp_path: Path) -> None:
    report = enumerate_crashes(postgres_factory(pg_dsn()), str(tmp_path))
    print(_report(report))
    _check_every_boundary(report)


def _taking_over(c: Case) -> bool:
    return c.first is not None and c.op in ("runs.replace", "effects.start", "effects.finish")


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_crash_while_taking_a_run_over(tmp_path: Path, store: str) -> None:
    """The run level: the first owner dies inside the continuation (right after claiming the
    run, and right after starting its last effect); a second owner, its lease run out, takes
    the run over and is killed at each of its run writes -- the take-over itself, the effect
    journal's start and finish under its epoch, its progress -- and a third finishes."""
    factory = sqlite_factory if store == "sqlite" else postgres_factory(pg_dsn())
    report = enumerate_crashes(factory, str(tmp_path), take_over=True, only=_taking_over)
    print(_report(report))
    assert len({r.case.first for r in report.results}) == 2  # both take-over points
    assert {r.case.op for r in report.results} >= {"runs.replace", "effects.start",
                                                   "effects.finish"}
    assert all(r.died for r in report.results), [r.case for r in report.results if not r.died]
    assert report.violations == [], "\n".join(report.violations)


# -- the embedding engine: one commit per operation --------------------------------------------


def _check_engine_units(report: CrashReport) -> None:
    """Every boundary of the scenario on the engine, each killed before and after: a start and
    a resume each commit once at their end and once at each effect, before it applies
    (``effect.journal.bracket``) -- four commits in all, every store write inside a unit."""
    assert report.cases == 2 * len(report.writes)
    assert report.writes.count("unit_of_work.commit") == 4, report.writes
    commits = [i for i, w in enumerate(report.writes) if w == "unit_of_work.commit"]
    for i, w in enumerate(report.writes):
        if w == "world.apply":  # an effect applies right after a commit of its journal start
            assert report.writes[i - 2:i] == ("effects.start", "unit_of_work.commit")
    assert commits[-1] == len(report.writes) - 1
    assert all(r.died for r in report.results), [r.case for r in report.results if not r.died]
    assert any(r.in_doubt for r in report.results)
    assert report.violations == [], "\n".join(report.violations)


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_crash_at_every_boundary_of_the_engine(tmp_path: Path, store: str) -> None:
    """The same scenario as an agent function on :class:`pausepoint.Engine`, whose start and
    resume are one unit of work each (cut at the effects): a death anywhere inside a unit
    loses all of it, and the run still ends done with every invariant kept."""
    factory = sqlite_factory if store == "sqlite" else postgres_factory(pg_dsn())
    report = enumerate_crashes(factory, str(tmp_path), engine=True)
    print(_report(report))
    _check_engine_units(report)


# -- the checks bite -------------------------------------------------------------------------


def test_broken_forgetful_journal_is_caught(tmp_path: Path) -> None:
    """An implementation that retries an effect in doubt applies it twice when the process died
    after the effect and before its journal entry said finished."""
    report = enumerate_crashes(sqlite_factory, str(tmp_path), broken="forgetful-journal",
                               only=lambda c: c.op == "world.apply" and c.when == "after")
    assert report.cases == 2
    for r in report.results:
        assert any("applied 2 times" in v for v in r.violations), r
        assert any("retried before" in v for v in r.violations), r


def test_broken_forgetful_journal_is_caught_after_a_take_over(tmp_path: Path) -> None:
    """The first owner dies right after claiming the run; the owner that took it over dies
    right after applying the effect: a journal that forgets an effect in doubt has the third
    owner apply it again."""
    report = enumerate_crashes(sqlite_factory, str(tmp_path), broken="forgetful-journal",
                               take_over=True,
                               only=lambda c: c.first is not None
                               and "runs.replace" in (c.first.op, c.first.prev)
                               and c.op == "world.apply"
                               and c.when == "after")
    assert report.cases == 1
    for r in report.results:
        assert any("applied 2 times" in v for v in r.violations), r


def _around_the_consume(c: Case) -> bool:
    return c.op in ("ledger.transition", "runs.replace") or c.prev == "ledger.transition"


def test_broken_replay_only_harness_is_caught(tmp_path: Path) -> None:
    """A harness that never continues a run stalled between the consume and its continuation
    (the bug crash injection found first): dying anywhere after the consume and before the run
    is claimed for its continuation leaves it paused forever, its answer accepted and lost."""
    report = enumerate_crashes(sqlite_factory, str(tmp_path), broken="replay-only",
                               only=_around_the_consume)
    caught = {(r.case.point, r.case.when) for r in report.results if r.violations}
    consume = max(r.case.point for r in report.results if r.case.op == "ledger.transition")
    claim = min(r.case.point for r in report.results  # the continuation's claim: every run
                if r.case.op == "runs.replace" and r.case.point > consume)  # write is a replace
    if report.writes[claim] == "unit_of_work.commit":  # the claim commits with its unit
        claim += 1
    ran = {(r.case.point, r.case.when) for r in report.results}
    stalled = {(p, w) for p in range(consume, claim + 1) for w in ("before", "after")
               if (p, w) not in ((consume, "before"), (claim, "after"))} & ran
    assert caught == stalled, caught
    for r in report.results:
        if r.violations:
            assert any("run not done: paused" in v for v in r.violations), r


def test_broken_answerless_restart_is_caught(tmp_path: Path) -> None:
    """A restart that continues a stalled run although its answer died with the process that
    won the consume (the second bug crash injection found): the run goes on with no answer."""
    report = enumerate_crashes(sqlite_factory, str(tmp_path), broken="answerless-restart",
                               only=_around_the_consume)
    caught = {(r.case.point, r.case.when) for r in report.results if r.violations}
    consume = max(r.case.point for r in report.results if r.case.op == "ledger.transition")
    assert caught == {(consume, "after"), (consume + 1, "before")}, caught
    for r in report.results:
        if r.violations:
            assert any("continued with the answer None" in v for v in r.violations), r


def test_broken_reminting_restart_is_caught(tmp_path: Path) -> None:
    """After a restart, a pause must be published with the token already issued: a fresh token
    for the same pause is a second token the person never got -- and the ledger refuses it."""
    report = enumerate_crashes(sqlite_factory, str(tmp_path), broken="reminting",
                               only=lambda c: c.op == "ledger.transition")
    consume = max(r.case.point for r in report.results)
    before_consume = next(r for r in report.results
                          if (r.case.point, r.case.when) == (consume, "before"))
    assert any("2 different tokens were published" in v for v in before_consume.violations)
    assert all(r.violations for r in report.results if r.case.point < consume)


def _children_command_lines() -> list[list[str]]:
    """The command line of every live process this one started (read from ``/proc``)."""
    me = os.getpid()
    out: list[list[str]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # it ended meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:  # the field after the state: ppid
            out.append([a.decode(errors="replace") for a in argv if a])
    return out


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux's /proc")
def test_no_password_on_a_worker_command_line(tmp_path: Path) -> None:
    """The PostgreSQL DSN (with its password) reaches the workers, and ``ps`` does not show it:
    a worker is a fork of the crash tool's fork server, with the server's command line, and
    gets its spec through the server's socket, not on any command line."""
    dsn = pg_dsn()
    password = urlsplit(dsn).password
    assert password, f"the test DSN has no password to keep secret: {dsn!r}"
    files = prepare(postgres_factory(dsn)(str(tmp_path)), str(tmp_path))
    try:
        writes = dry_run(files)  # the worker connected: it got the DSN
    finally:
        drop(files.store)
    seen = _children_command_lines()
    assert writes and any("multiprocessing.forkserver" in " ".join(argv) for argv in seen), seen
    secret = f":{password}@"  # the password as a DSN carries it (the bare word may be common)
    for argv in seen:
        assert not any(dsn in arg or secret in arg for arg in argv), argv


# -- any implementation, through the adapter protocol ------------------------------------------

BROKEN = Path(__file__).parent / "broken"


def _crash_over_stdio(command: str) -> AdapterCrashReport:
    adapter, name = make_adapter(f'cmd:"{command}"', timeout=120)
    try:
        return crash_adapter(adapter, name)
    finally:
        adapter.close()


def test_the_reference_over_stdio_is_crashed_through_the_protocol() -> None:
    """The crash tool drives any implementation the way ``pausepoint conform --adapter`` does:
    here the reference as a subprocess speaking the stdio protocol, crashed inside each effect
    (before and after it applies) and after each operation."""
    report = _crash_over_stdio(
        f"{sys.executable} -m pausepoint_conformance.adapters.stdio_reference")
    print("\n".join(report.lines()))
    assert [c.name for c, _ in report.results] == [
        "restart after start", "restart after resume", "crash_before_apply in a",
        "crash_after_apply in a", "crash_before_apply in b", "crash_after_apply in b"]
    assert report.violations == [], "\n".join(report.violations)


def test_an_implementation_retrying_effects_in_doubt_is_caught_over_stdio() -> None:
    """tests/broken/unknown_retried.py forgets effects journalled started: after the crash it
    runs them again, and surfaces no recovery pause."""
    report = _crash_over_stdio(f"{sys.executable} {BROKEN / 'unknown_retried.py'}")
    print("\n".join(report.lines()))
    assert any("effect a applied 2 times" in v for v in report.violations)
    assert any("no recovery pause for effect b" in v for v in report.violations)


def test_the_crash_command_takes_an_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} {BROKEN / 'not_durable.py'}"
    code = crash_main(["run", "--adapter", f'cmd:"{command}"'])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "restart after start" in out and "the run did not end done" in out


# -- a dead canceller --------------------------------------------------------------------------


def _cancel_cases(store: str, tmp_path: Path, broken: str | None = None,
                  only: Any = None) -> CrashReport:
    factory = sqlite_factory if store == "sqlite" else postgres_factory(pg_dsn())
    files = prepare(factory(str(tmp_path / "mark")), str(tmp_path / "mark"))
    try:  # where the cancel's writes begin
        dry_run(files, "cancel")
        first = cancel_from(read_jsonl(files.trace))
    finally:
        drop(files.store)
    return enumerate_crashes(factory, str(tmp_path), scenario="cancel", broken=broken,
                             only=lambda c: c.point >= first and (only is None or only(c)))


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_crash_at_every_write_of_a_cancel(tmp_path: Path, store: str) -> None:
    """`cancel.propagates`, `run.ownership.lease`: a run and its child, both paused, are
    cancelled; the canceller is killed before and after every write of the cancel -- each
    run's take-over, its pause's cancel, each end, each unit of work's commit -- and a fresh
    process restarts (finishing a cancel whose canceller died) and cancels only if the cancel
    never began: both runs end cancelled, no pause live, no effect after the question
    applied."""
    report = _cancel_cases(store, tmp_path)
    print(_report(report))
    cancel = report.writes[-len(report.results) // 2:]
    assert cancel.count("runs.replace") == 4  # two take-overs, two ends
    assert cancel.count("ledger.transition") == 2  # the two pauses cancelled
    assert "unit_of_work.commit" in cancel
    assert all(r.died for r in report.results), [r.case for r in report.results if not r.died]
    assert report.violations == [], "\n".join(report.violations)


def test_broken_skip_cancels_is_caught(tmp_path: Path) -> None:
    """A restart that skips cancelling runs: the canceller killed after the commit of the
    parent's take-over (before its child's and its own end) leaves the run cancelling for
    ever, and the check says so."""
    report = _cancel_cases("sqlite", tmp_path, broken="skip-cancels",
                           only=lambda c: c.op == "unit_of_work.commit" and c.when == "after")
    assert report.cases >= 1
    stuck = [r for r in report.results if any("not cancelled: cancelling" in v
                                              for v in r.violations)]
    assert stuck, [r.violations for r in report.results]


def test_workers_started_and_joined_from_many_threads_keep_their_exit_codes(
        tmp_path: Path) -> None:
    """Workers started and waited for from several threads at once (as the orchestrator's
    pool does) each report their own death by SIGKILL: no thread reads another's exit status
    (which multiprocessing then reports as 255)."""
    files = prepare(sqlite_factory(str(tmp_path)), str(tmp_path))
    spec = {"files": files.to_json(), "proc": "first", "die_at": 1, "when": "before"}
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda _i: _run_worker(spec).returncode, range(400)))
    assert codes == [-signal.SIGKILL] * len(codes), sorted(set(codes))
