"""Tests of the scenario vectors: the model driver, generation (exhaustive and random,
deterministic by seed), the file format (validated against the published JSON Schema with
``jsonschema``), replay through the reference (in process and over stdio), and replay failing
broken implementations for the right clause.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pausepoint.core.clauses import CLAUSE_BY_ID, Group
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.cli.main import main as cli_main
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite.framework import CaseOutcome
from pausepoint_conformance.vectors.driver import ModelDriver
from pausepoint_conformance.vectors.generator import (
    FAMILIES,
    build_case,
    enabled,
    exhaustive,
    generate,
    write_all,
)
from pausepoint_conformance.vectors.replay import (
    LoadedCase,
    VectorFile,
    case_id,
    load_files,
    replay_case,
    vector_paths,
)
from scratch import fast_env

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "spec" / "schemas" / "vector-file.json").read_text())
ALL = frozenset(Group)
FAMILY = {f.name: f for f in FAMILIES}


@pytest.fixture(scope="module")
def files() -> dict[str, VectorFile]:
    return generate(depth=2, random=60, seed=11)


@pytest.fixture(scope="module")
def written(files: dict[str, VectorFile], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vectors")
    write_all(out, files)
    return out


def cases_of(files: dict[str, VectorFile]) -> list[LoadedCase]:
    return [LoadedCase(c, vf.ttl_ms, f"{name}.json") for name, vf in files.items()
            for c in vf.cases]


# -- the model driver ------------------------------------------------------------------------


def test_driver_start_resume_replay_conflict() -> None:
    d = ModelDriver(FAMILY["basic"].runs)
    exp = d.start("r1")
    assert exp.expect == {"result": "ok", "status": "paused", "pauses": [
        {"ref": "r1#0", "kind": "ask", "resumable": True, "name": "approve"}]}
    assert d.observe() == {"pauses": {"r1#0": "resumable"}, "effects": {"r1/a": 1, "r1/b": 0}}
    assert d.resume("r1#0", "yes").expect == {"result": "ok", "status": "done", "pauses": [],
                                              "replayed": False}
    assert d.observe()["effects"] == {"r1/a": 1, "r1/b": 1}
    assert d.resume("r1#0", "yes").expect == {"result": "ok", "replayed": True,
                                              "status": "done"}
    assert d.resume("r1#0", "no").expect == {"result": "refused",
                                             "codes": ["response_conflict"]}
    assert d.observe()["effects"] == {"r1/a": 1, "r1/b": 1}


def test_driver_crash_after_apply_surfaces_reconciles_and_skips() -> None:
    d = ModelDriver(FAMILY["crash-after-apply"].runs)
    assert d.start("r1").expect["status"] == "stopped"
    exp = d.crash_restart()
    assert exp.expect["pauses"] == [{"ref": "r1#0", "kind": "recovery", "resumable": False}]
    assert d.observe()["pauses"] == {"r1#0": "unknown_outcome"}
    assert d.resume("r1#0", "yes").expect == {"result": "refused", "codes": ["outcome_unknown"]}
    resolution, exp = d.reconcile("r1#0")
    assert resolution == "applied" and exp.expect == {"result": "ok", "phase": "resumable"}
    assert d.resume("r1#0", "yes").expect["status"] == "paused"
    assert d.observe()["effects"]["r1/a"] == 1


def test_driver_variants_are_refused_and_change_nothing() -> None:
    d = ModelDriver(FAMILY["basic"].runs)
    d.start("r1")
    before = d.observe()
    for variant, codes in (("altered_token", ["token_invalid", "token_malformed"]),
                           ("other_scope", ["scope_mismatch"]),
                           ("other_session", ["binding_mismatch"]),
                           ("invalid_response", ["response_invalid"])):
        assert d.resume("r1#0", "yes", variant).expect == {"result": "refused", "codes": codes}
        assert d.observe() == before
    d.advance(2)
    assert d.observe()["pauses"] == {"r1#0": "expired"}


# -- generation ------------------------------------------------------------------------------


def test_generation_is_deterministic_by_seed() -> None:
    a = generate(depth=1, random=25, seed=5)
    b = generate(depth=1, random=25, seed=5)
    c = generate(depth=1, random=25, seed=6)
    dump = {k: v.model_dump(mode="json", by_alias=True) for k, v in a.items()}
    assert dump == {k: v.model_dump(mode="json", by_alias=True) for k, v in b.items()}
    ids = {x.id for v in a.values() for x in v.cases}
    assert ids != {x.id for v in c.values() for x in v.cases}
    assert sum(len(v.cases) for v in a.values()) == sum(
        1 + len(enabled(_started(f))) for f in FAMILIES) + 25


def _started(family: Any) -> ModelDriver:
    d = ModelDriver(family.runs)
    for r in family.runs:
        d.start(r.run_id)
    return d


def test_exhaustive_enumerates_every_enabled_sequence() -> None:
    fam = FAMILY["basic"]
    seqs = list(exhaustive(fam, 2))
    first = enabled(_started(fam))
    assert sum(1 for s in seqs if len(s) == 1) == len(first)
    assert len(set(seqs)) == len(seqs)
    assert {s[0] for s in seqs if s} == set(first)


def test_files_validate_against_the_published_schema(written: Path) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    paths = vector_paths(written)
    assert len(paths) == len(FAMILIES)
    for p in paths:
        data = json.loads(p.read_text())
        validator.validate(data)
        assert data["format_version"] == 1 and data["generator"]["version"]
        assert data["$schema"].endswith("vector-file.json")
    # the schema bites: a case without its expectations is rejected
    broken = json.loads(paths[0].read_text())
    del broken["cases"][0]["steps"][0]["expect"]
    assert not validator.is_valid(broken)


def test_cases_have_content_hash_ids_unique_descriptions_and_real_clauses(
        files: dict[str, VectorFile]) -> None:
    seen_ids: set[str] = set()
    seen_desc: set[str] = set()
    for vf in files.values():
        for c in vf.cases:
            raw = c.model_dump(mode="json", by_alias=True, exclude_none=True)
            assert c.id == case_id(vf.ttl_ms, raw["runs"], raw["steps"])
            assert c.id not in seen_ids and c.description not in seen_desc
            seen_ids.add(c.id)
            seen_desc.add(c.description)
            assert c.clauses and all(x in CLAUSE_BY_ID for x in c.clauses)
            for s in c.steps:
                assert all(x in CLAUSE_BY_ID for x in s.clauses)
                assert set(s.flags) <= set(vf.notes)
    assert len(seen_ids) > 900


def test_a_changed_expectation_changes_the_id() -> None:
    case = build_case(FAMILY["basic"], (("resume", "r1#0", "yes", "valid"),))
    raw = case.model_dump(mode="json", by_alias=True, exclude_none=True)
    raw["steps"][1]["expect"]["status"] = "paused"
    assert case_id(60_000, raw["runs"], raw["steps"]) != case.id


# -- replay ----------------------------------------------------------------------------------


def test_every_vector_passes_on_the_reference_in_process(files: dict[str, VectorFile]) -> None:
    adapter = ReferenceAdapter("memory")
    claimed = frozenset(g for g in Group if g != Group.DURABILITY)
    try:
        results = [replay_case(adapter, c, claimed) for c in cases_of(files)]
    finally:
        adapter.close()
    bad = [r.record() for r in results
           if r.outcome not in (CaseOutcome.PASSED, CaseOutcome.NOT_CLAIMED)]
    assert not bad, bad[:3]
    not_claimed = [r for r in results if r.outcome == CaseOutcome.NOT_CLAIMED]
    assert not_claimed and all("durability" in r.message for r in not_claimed)


def test_vectors_pass_on_the_reference_over_stdio(files: dict[str, VectorFile]) -> None:
    sample = cases_of(files)[::7]
    adapter = StdioAdapter(
        [sys.executable, "-m", "pausepoint_conformance.adapters.stdio_reference"],
        timeout=30, env=fast_env())
    try:
        results = [replay_case(adapter, c, ALL) for c in sample]
    finally:
        adapter.close()
    assert [r.record() for r in results if r.outcome != CaseOutcome.PASSED] == []


@pytest.mark.parametrize("broken,families,clauses", [
    ("rerun_pre_pause", ["basic", "two-questions"], {"effect.at-most-once"}),
    ("sibling_disturbed", ["multi"], {"multi.independent"}),
    ("cross_scope", ["basic"], {"resume.binding.scope"}),
    ("unknown_retried", ["crash-after-apply"], {"effect.unknown-outcome"}),
    ("cancel_not_propagated", ["lineage"], {"cancel.propagates", "cancel.distinct"}),
    ("resumable_early", ["unrecorded"], {"turn.resumable.earned",
                                         "turn.write-failed.stays-paused"}),
])
def test_vectors_fail_a_broken_implementation_for_its_clause(
        files: dict[str, VectorFile], broken: str, families: list[str],
        clauses: set[str]) -> None:
    chosen = cases_of({f: files[f] for f in families})
    chosen = chosen[::max(1, len(chosen) // 80)]
    path = ROOT / "tests" / "broken" / f"{broken}.py"
    adapter = StdioAdapter([sys.executable, str(path)], timeout=30)
    try:
        results = [replay_case(adapter, c, ALL) for c in chosen]
    finally:
        adapter.close()
    failed = {r.failed_clause for r in results if r.outcome == CaseOutcome.FAILED}
    assert failed & clauses, (broken, failed)
    assert not [r for r in results if r.outcome == CaseOutcome.ERRORED]


def test_scenarios_command_then_conform_replays_them(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v"
    assert cli_main(["scenarios", "--out", str(out), "--depth", "1", "--random", "10",
                     "--seed", "3"]) == 0
    assert "wrote" in capsys.readouterr().out
    files = vector_paths(out)
    assert {p.stem for p in files} == set(FAMILY)
    report = tmp_path / "r.jsonl"
    code = cli_main(["conform", "--adapter", "reference:memory", "--vectors", str(out),
                     "--json", str(report), "--quiet"])
    recs = [json.loads(line) for line in report.read_text().splitlines()]
    vectors = [r for r in recs if r["type"] == "case" and r["kind"] == "vector"]
    assert len(vectors) == len(load_files(files))
    assert {r["outcome"] for r in vectors} <= {"passed", "not_claimed"}
    assert code == 0, capsys.readouterr().out
    # vectors alone: the clauses only the checks reach are reported untested, not passed
    assert cli_main(["conform", "--adapter", "reference:memory", "--vectors", str(out),
                     "--no-checks", "--quiet", "--json", str(report)]) == 0
    clauses = [json.loads(line) for line in report.read_text().splitlines()]
    untested = {r["id"] for r in clauses if r["type"] == "clause" and r["verdict"] == "untested"}
    assert "token.claims" in untested and "resume.authority" in untested
    assert cli_main(["scenarios", "--out", str(out), "--family", "nope"]) == 2


def test_a_failing_vector_names_the_step_that_caused_the_failure(
        files: dict[str, VectorFile]) -> None:
    """A broken implementation re-runs the effect before the pause on resume (step 2); with
    only the last step checking the effect counts, the symptom shows at step 3 -- and the
    failure names step 2 as its cause.  With the check at step 2 the failure is at its cause
    and names nothing more."""
    case = next(c for c in files["basic"].cases
                if [s.op for s in c.steps] == ["start", "resume", "resume"])
    quiet = [s.model_copy(update={"check": s.check.model_copy(update={"effects": {}})})
             for s in case.steps[:-1]]
    late = case.model_copy(update={"steps": [*quiet, case.steps[-1]]})
    path = ROOT / "tests" / "broken" / "rerun_pre_pause.py"
    adapter = StdioAdapter([sys.executable, str(path)], timeout=30)
    try:
        r = replay_case(adapter, LoadedCase(late, files["basic"].ttl_ms, "basic.json"), ALL)
        first = replay_case(adapter, LoadedCase(case, files["basic"].ttl_ms, "basic.json"), ALL)
    finally:
        adapter.close()
    assert r.outcome == CaseOutcome.FAILED and r.failed_clause == "effect.at-most-once"
    assert r.message.startswith("after step 3 (resume)"), r.message
    assert "caused by step 2 (resume)" in r.message, r.message
    assert first.outcome == CaseOutcome.FAILED and "after step 2 (resume)" in first.message
    assert "caused by" not in first.message
