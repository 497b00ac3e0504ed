"""Tests of the conformance suite itself: the reference passes it (in process and over stdio),
every clause is checked, the runner accounts for every case and
turns crashes, hangs and garbage into ``errored`` (driven through the scriptable fake), and the
reports (JSON Lines, JUnit XML, the clause table, the exit status) say what happened.

The other half -- each check fails on a deliberately broken implementation -- is
``tests/test_conformance_broken.py``.
"""

from __future__ import annotations

import io
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pausepoint.core.clauses import CLAUSE_BY_ID, CLAUSES, Group
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.cli.main import main as cli_main
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.protocol.wire import OPTIONAL_OPS
from pausepoint_conformance.suite import checks as _checks  # noqa: F401 - registers the checks
from pausepoint_conformance.suite.framework import CHECKS, CaseOutcome, check
from pausepoint_conformance.suite.report import clause_table, junit_xml, print_summary, write_jsonl
from pausepoint_conformance.suite.runner import Plan, SuiteResult, Verdict, run_suite
from scratch import fast_env, fast_tmpdir

PY = sys.executable
FAKE = [PY, "-m", "pausepoint_conformance.adapters.fake"]
CONCURRENCY = tuple(c for c in CHECKS if c.id.startswith("concurrency/"))
NOT_CONCURRENCY = tuple(c for c in CHECKS if not c.id.startswith("concurrency/"))
CONCURRENCY_ONLY = {"resume.consume.single-winner"}
"""Clauses only the race checks reach (skipped with them below)."""


def verdicts(result: SuiteResult) -> dict[str, str]:
    return {v.id: v.verdict for v in result.clauses}


def not_passing(result: SuiteResult, ignore: frozenset[str] = frozenset()) -> dict[str, str]:
    claimed = set(result.header["claimed"])
    return {v.id: f"{v.verdict}: {v.why}" for v in result.clauses
            if v.group in claimed and v.id not in ignore
            and v.verdict != Verdict.PASSED}


def fake(*flags: str, timeout: float = 30.0) -> StdioAdapter:
    return StdioAdapter(FAKE + list(flags), timeout=timeout)


def run(adapter: Any, checks: tuple[Any, ...] | None = None) -> SuiteResult:
    try:
        plan = Plan(checks=checks) if checks is not None else Plan()
        return run_suite(adapter, adapter_name="test", plan=plan)
    finally:
        adapter.close()


# -- the catalogue is covered ----------------------------------------------------------------


def test_every_clause_is_checked() -> None:
    cited = {c for chk in CHECKS for c in chk.clauses}
    assert cited <= set(CLAUSE_BY_ID), cited - set(CLAUSE_BY_ID)
    missing = [c.id for c in CLAUSES if c.id not in cited]
    assert not missing, f"clauses no check cites: {missing}"


def test_every_checked_clause_can_pass_with_only_its_own_group_claimed() -> None:
    """An implementation claiming only core + one group must be able to pass every clause of
    that group: some check citing it needs nothing else."""
    for cid in {c for chk in CHECKS for c in chk.clauses}:
        group = CLAUSE_BY_ID[cid].group
        assert any(cid in chk.clauses and chk.groups <= {Group.CORE, group} for chk in CHECKS), cid


def test_checks_cite_only_catalogue_clauses_and_have_unique_ids() -> None:
    assert len({c.id for c in CHECKS}) == len(CHECKS)
    assert all(c.clauses and all(x in CLAUSE_BY_ID for x in c.clauses) for c in CHECKS)
    with pytest.raises(KeyError):
        check("x/typo", "a check citing a clause that does not exist",
              ["resume@consume@single-winer".replace("@", ".")])


# -- the reference passes --------------------------------------------------------------------


def test_reference_memory_in_process_passes_every_claimed_clause() -> None:
    result = run(ReferenceAdapter("memory"))
    assert result.exit_status == 0, not_passing(result)
    assert not_passing(result) == {}
    v = verdicts(result)
    assert {c.id for c in CLAUSES if c.group == Group.DURABILITY} == {
        k for k, x in v.items() if x == Verdict.NOT_CLAIMED}
    assert result.counts()["failed"] == result.counts()["errored"] == 0


def test_reference_sqlite_in_process_passes() -> None:
    result = run(ReferenceAdapter("sqlite", scratch=fast_tmpdir()))
    assert result.exit_status == 0, not_passing(result)
    assert not_passing(result) == {}
    assert all(x != Verdict.NOT_CLAIMED for x in verdicts(result).values())


def test_reference_over_stdio_passes() -> None:
    result = run(StdioAdapter([PY, "-m", "pausepoint_conformance.adapters.stdio_reference"],
                              timeout=30, env=fast_env()))
    assert result.header["implementation"]["name"].startswith("pausepoint-reference")
    assert result.exit_status == 0, not_passing(result)
    assert not_passing(result) == {}


def test_reference_memory_races_have_one_winner_over_stdio() -> None:
    result = run(StdioAdapter([PY, "-m", "pausepoint_conformance.adapters.stdio_reference",
                               "--store", "memory"]), CONCURRENCY)
    assert result.counts()["passed"] == len(CONCURRENCY), [c.record() for c in result.cases]


def test_reference_sqlite_races_have_one_winner(tmp_path: Path) -> None:
    result = run(ReferenceAdapter("sqlite", scratch=str(tmp_path)), CONCURRENCY * 2)
    assert result.counts()["passed"] == 2 * len(CONCURRENCY), [
        c.record() for c in result.cases if c.outcome != CaseOutcome.PASSED]


# -- the runner against the scriptable fake --------------------------------------------------

FIRST = (CHECKS[0], CHECKS[1])


def test_fake_behaving_passes() -> None:
    result = run(fake(), FIRST)
    assert [c.outcome for c in result.cases] == [CaseOutcome.PASSED, CaseOutcome.PASSED]


def test_a_crash_is_errored_and_the_next_check_gets_a_fresh_process(tmp_path: Path) -> None:
    adapter = fake("--crash-on", "start:1", "--once", str(tmp_path / "fired"))
    result = run(adapter, FIRST)
    first, second = result.cases
    assert first.outcome == CaseOutcome.ERRORED
    assert "exited" in first.message and "fake: crashing on start" in first.message
    assert second.outcome == CaseOutcome.PASSED, second.message  # a fresh process
    assert adapter.spawns == 2
    assert result.exit_status == 1
    assert any(verdicts(result)[c] == Verdict.ERRORED for c in first.clauses)


def test_a_hang_is_errored_within_the_timeout() -> None:
    """The verdict only: how long the suite waits is bench/bench_conformance.py's figure."""
    result = run(fake("--hang-on", "resume:1", timeout=1.0), (CHECKS[1],))
    (case,) = result.cases
    assert case.outcome == CaseOutcome.ERRORED and "within 1 s (hang)" in case.message


@pytest.mark.parametrize("flag,needle", [
    ("--garbage-on", "garbage on stdout"),
    ("--wrong-id-on", "has id"),
    ("--invalid-on", "not a valid message"),
])
def test_bad_output_is_errored(flag: str, needle: str, tmp_path: Path) -> None:
    result = run(fake(flag, "start:1", "--once", str(tmp_path / "fired")), FIRST)
    assert result.cases[0].outcome == CaseOutcome.ERRORED
    assert needle in result.cases[0].message
    assert result.cases[1].outcome == CaseOutcome.PASSED, result.cases[1].message
    assert result.exit_status == 1


def test_protocol_mismatch_fails_the_handshake() -> None:
    result = run(fake("--protocol", "99"))
    assert result.header["error"] and "protocol 99" in result.header["error"]
    assert [c.id for c in result.cases] == ["hello"]
    assert set(verdicts(result).values()) == {Verdict.ERRORED}
    assert result.exit_status == 1


def test_a_command_that_cannot_start_is_errored() -> None:
    result = run(StdioAdapter(["/nonexistent/adapter-binary"]))
    assert result.exit_status == 1 and result.cases[0].outcome == CaseOutcome.ERRORED


def test_claiming_only_core_reports_the_rest_not_claimed_and_can_still_pass() -> None:
    result = run(fake("--claim", "core"))
    v = verdicts(result)
    for c in CLAUSES:
        if c.group != Group.CORE:
            assert v[c.id] == Verdict.NOT_CLAIMED, c.id
    assert all(c.outcome in (CaseOutcome.PASSED, CaseOutcome.NOT_CLAIMED) for c in result.cases)
    assert result.exit_status == 0


def test_skipped_operations_never_pass() -> None:
    result = run(fake("--skip", "resume"))
    skipped = [c for c in result.cases if c.outcome == CaseOutcome.SKIPPED]
    assert skipped and all("told to skip resume" in c.message for c in skipped)
    v = verdicts(result)
    assert v["resume.response.schema"] == v["replay.same-response"] == Verdict.SKIPPED
    assert result.exit_status == 1


class RequiredOnly:
    """An in-process adapter with only the required operations of the port."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in {op.value for op in OPTIONAL_OPS}:
            raise AttributeError(name)
        return getattr(self._inner, name)


OPTIONAL_CHECKS = {
    "status": ("status/", "status.distinguishes"),
    "rotate_key": ("tokens/rotation-drain", "token.rotation.drain"),
    "retire_key": ("tokens/rotation-drain", "token.rotation.drain"),
    "wiring": ("wiring/", "wiring.consistent"),
    "interleave": ("run/stale-continuation", "run.continuation.belongs-to-step"),
}


@pytest.mark.parametrize("op", sorted(OPTIONAL_CHECKS))
@pytest.mark.parametrize("how", ["stdio-skipped", "in-process-missing"])
def test_a_missing_optional_operation_is_skipped_never_passed(how: str, op: str) -> None:
    assert set(OPTIONAL_CHECKS) == {o.value for o in OPTIONAL_OPS}
    prefix, clause_id = OPTIONAL_CHECKS[op]
    checks = tuple(c for c in CHECKS if c.id.startswith(prefix))
    assert checks
    adapter = (fake("--skip", op) if how == "stdio-skipped"
               else RequiredOnly(ReferenceAdapter("memory")))
    result = run(adapter, checks)
    assert [c.outcome for c in result.cases] == [CaseOutcome.SKIPPED] * len(checks), [
        c.record() for c in result.cases]
    assert verdicts(result)[clause_id] == Verdict.SKIPPED
    assert result.exit_status == 1


def test_the_stdio_server_answers_a_missing_optional_operation_skipped() -> None:
    from pausepoint_conformance.protocol.stdio import handle_line

    line = json.dumps({"id": 3, "op": "status", "args": {"run_id": "r1"}})
    response, _ = handle_line(RequiredOnly(ReferenceAdapter("memory")), line)
    assert response["result"]["status"] == "skipped", response


def test_a_liar_accepting_every_resume_fails() -> None:
    result = run(fake("--accept-every-resume"))
    v = verdicts(result)
    for cid in ("resume.response.schema", "token.integrity", "resume.binding.scope",
                "resume.consume.at-most-once", "resume.continuation.recorded-turn"):
        assert v[cid] == Verdict.FAILED, (cid, v[cid])
    assert result.exit_status == 1


def test_refusing_every_resume_fails() -> None:
    result = run(fake("--refuse-every-resume"))
    assert verdicts(result)["resume.continuation.recorded-turn"] == Verdict.FAILED
    assert result.exit_status == 1


def test_stderr_noise_and_stray_prints_do_not_break_the_protocol() -> None:
    result = run(fake("--noise", "--print-on", "start"), CHECKS[:6])
    assert result.counts()["passed"] == 6, [c.record() for c in result.cases]


def test_nothing_ran_is_not_a_pass() -> None:
    result = run(ReferenceAdapter("memory"), ())
    assert result.cases == [] and result.exit_status == 1


# -- reports ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_result() -> SuiteResult:
    """A run with every outcome: passes, a failure (the liar), skips, not-claimed."""
    return run(fake("--accept-every-resume", "--claim", "core,tokens,expiry"))


def test_jsonl_report_is_header_cases_clauses_footer(mixed_result: SuiteResult) -> None:
    buf = io.StringIO()
    write_jsonl(mixed_result, buf)
    recs = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert recs[0]["type"] == "header" and recs[-1]["type"] == "footer"
    assert recs[0]["claimed"] == ["core", "expiry", "tokens"]
    cases = [r for r in recs if r["type"] == "case"]
    clauses = [r for r in recs if r["type"] == "clause"]
    assert len(cases) == len(CHECKS) and len(clauses) == len(CLAUSES)
    footer = recs[-1]
    for k in ("passed", "failed", "skipped", "errored", "not_claimed"):
        assert footer[k] == sum(1 for c in cases if c["outcome"] == k)
    assert footer["failed"] > 0 and footer["not_claimed"] > 0 and footer["passed"] > 0
    failed = [c for c in cases if c["outcome"] == "failed"]
    assert all(c["failed_clause"] in CLAUSE_BY_ID and "expected" in c and "got" in c
               and c["message"] for c in failed)
    assert all(c["reason"] for c in cases if c["outcome"] == "not_claimed")
    assert footer["exit_status"] == 1


def test_junit_report_parses_and_counts(mixed_result: SuiteResult) -> None:
    root = ET.fromstring(junit_xml(mixed_result))
    suite = root.find("testsuite")
    assert suite is not None
    counts = mixed_result.counts()
    assert int(suite.get("tests", -1)) == len(mixed_result.cases)
    assert int(suite.get("failures", -1)) == counts["failed"]
    assert int(suite.get("skipped", -1)) == counts["skipped"] + counts["not_claimed"]
    failures = suite.findall("testcase/failure")
    assert len(failures) == counts["failed"]
    assert all("expected:" in (f.text or "") for f in failures)


def test_clause_table_lists_every_clause_with_a_reason(mixed_result: SuiteResult) -> None:
    console = Console(file=io.StringIO(), width=250)
    console.print(clause_table(mixed_result))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    for c in CLAUSES:
        assert c.id in text
    assert "FAIL" in text and "not claimed" in text
    console = Console(file=io.StringIO(), width=250)
    print_summary(mixed_result, console, show_table=False)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "NOT CONFORMANT" in out and "expected:" in out


# -- the command line ------------------------------------------------------------------------


def test_conform_help_teaches_adapters_examples_and_exit_status(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["conform", "--help"])
    out = capsys.readouterr().out
    for needle in ("reference:memory", "cmd:", "MODULE:CALLABLE", "Examples:", "Exit status:",
                   "--vectors", "--json", "--junit"):
        assert needle in out, needle


def test_conform_command_writes_reports_and_exits_0(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["conform", "--adapter", "reference:memory", "--json",
                     str(tmp_path / "r.jsonl"), "--junit", str(tmp_path / "r.xml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "every claimed clause passed" in out and "resume.consume.at-most-once" in out
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["exit_status"] == 0
    ET.parse(tmp_path / "r.xml")


def test_conform_command_fails_a_broken_implementation(capsys: pytest.CaptureFixture[str]) -> None:
    broken = Path(__file__).parent / "broken" / "cancel_ignored.py"
    code = cli_main(["conform", "--adapter", f'cmd:"{PY} {broken}"', "--only", "cancel/",
                     "--no-table"])
    out = capsys.readouterr().out
    assert code == 1 and "cancel.distinct" in out and "NOT CONFORMANT" in out


def test_conform_command_rejects_a_bad_adapter_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["conform", "--adapter", "reference:oracle"]) == 2
    assert cli_main(["conform", "--adapter", "no_such_module_xyz:make"]) == 2


def test_a_check_can_show_several_clauses_broken() -> None:
    """``Ctx.expect_also`` records a broken clause and lets the check go on: the case fails on
    the first failure, names the later ones, and every one of them is a FAILED clause."""
    from pausepoint.core.clauses import Group
    from pausepoint_conformance.suite.framework import Check, Ctx, run_check

    def soft_then_hard(ctx: Ctx) -> None:
        ctx.expect_also(False, "resume.consume.single-winner", 1, 4, "four winners")
        ctx.expect_also(True, "race.decided-once", 1, 1, "fine")
        ctx.expect(False, "effect.at-most-once", 1, 4, "the effect ran four times")

    def soft_only(ctx: Ctx) -> None:
        ctx.expect_also(False, "resume.consume.single-winner", 1, 2, "two winners")

    cited = ("resume.consume.single-winner", "race.decided-once", "effect.at-most-once")
    checks = tuple(Check(id=f"test/{fn.__name__}", description="", clauses=cited, fn=fn,
                         groups=frozenset({Group.CORE, Group.CONCURRENCY}))
                   for fn in (soft_then_hard, soft_only))
    adapter = ReferenceAdapter("memory")
    try:
        both, alone = (run_check(adapter, chk, frozenset(Group)) for chk in checks)
        result = run_suite(adapter, adapter_name="test", plan=Plan(checks=checks[:1]))
    finally:
        adapter.close()
    assert (both.outcome, both.failed_clause, both.message) == (
        CaseOutcome.FAILED, "resume.consume.single-winner", "four winners")
    assert both.also_failed == (("effect.at-most-once", "the effect ran four times"),)
    assert both.record()["also_failed"] == [{"clause": "effect.at-most-once",
                                             "message": "the effect ran four times"}]
    assert (alone.outcome, alone.failed_clause, alone.also_failed) == (
        CaseOutcome.FAILED, "resume.consume.single-winner", ())
    v = verdicts(result)
    assert v["resume.consume.single-winner"] == v["effect.at-most-once"] == Verdict.FAILED
    assert v["race.decided-once"] != Verdict.FAILED
    assert "the effect ran four times" in next(c.why for c in result.clauses
                                               if c.id == "effect.at-most-once")


def test_one_observation_records_every_clause_it_breaks() -> None:
    """A run report that breaks two independent clauses at once -- an event outside the
    vocabulary, *last*, so no terminal event ends the invocation -- fails the case on both,
    and the clause table shows both failed (neither passes because the other came first)."""
    from pausepoint_conformance.protocol.wire import RunReport

    class TrailingLog(ReferenceAdapter):
        def _run_report(self, rep: Any, h: Any = None) -> RunReport:
            report = super()._run_report(rep, h)
            return report.model_copy(update={"events": [*report.events, "log"]})

    adapter = TrailingLog("memory")
    try:
        result = run_suite(adapter, adapter_name="trailing-log", plan=Plan(
            checks=tuple(c for c in CHECKS if c.id == "core/pause-published")))
    finally:
        adapter.close()
    (case,) = result.cases
    broken = {case.failed_clause, *(c for c, _m in case.also_failed)}
    assert case.outcome == CaseOutcome.FAILED
    assert broken == {"run.events.vocabulary", "run.events.single-terminal"}
    v = verdicts(result)
    assert v["run.events.vocabulary"] == v["run.events.single-terminal"] == Verdict.FAILED
