"""Every conformance check is shown to bite: each deliberately broken implementation in
``tests/broken/`` -- the reference with one piece swapped for a plausible bug -- is driven over
the stdio protocol, with the checks alone and with the checks and a set of vectors, and the
suite must fail it for *exactly* what it declares (``tests/broken/_registry.py``): every clause
it MUST fail (with the vectors, also every one of VECTORS_MUST), and nothing beyond what it MAY
fail for a stated nondeterministic reason; no case may error, and every other
claimed clause must pass, be inconclusive (its cases stopped at the declared failure) or be
skipped (an optional operation the reference adapter does not offer).
"""

from __future__ import annotations

import sys
from functools import cache

import pytest
from _registry import Declared, registry

from pausepoint.core.clauses import CLAUSE_BY_ID
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite.runner import Plan, Verdict, run_suite
from pausepoint_conformance.vectors.generator import generate
from pausepoint_conformance.vectors.replay import LoadedCase

REGISTRY = registry()
VECTOR_SEED = 7


@cache
def vectors() -> tuple[LoadedCase, ...]:
    """A small, fixed set of vectors (every family at depth 1, and random ones by seed)."""
    files = generate(depth=1, random=20, seed=VECTOR_SEED)
    return tuple(LoadedCase(c, vf.ttl_ms, f"{name}.json") for name, vf in files.items()
                 for c in vf.cases)


def test_the_registry_declares_real_clauses_for_every_implementation() -> None:
    assert len(REGISTRY) >= 32
    for d in REGISTRY.values():
        assert d.must, f"{d.name} declares no clause it must fail"
        assert not d.must & d.may and not d.vectors_must & (d.must | d.may), d.name
        unknown = (d.must | d.may | d.vectors_must) - set(CLAUSE_BY_ID)
        assert not unknown, (d.name, unknown)
        unreasoned = [c for c, why in d.reasons if not why.strip()]
        assert not unreasoned, f"{d.name}: MAY needs a reason for each clause: {unreasoned}"
    groups = {CLAUSE_BY_ID[c].group for d in REGISTRY.values() for c in d.must}
    assert len(groups) >= 8, groups


def judge(d: Declared, with_vectors: bool) -> None:
    adapter = StdioAdapter([sys.executable, str(d.path)], timeout=60)
    plan = Plan(vectors=vectors()) if with_vectors else None
    try:
        result = run_suite(adapter, adapter_name=d.name, plan=plan)
    finally:
        adapter.close()
    assert result.header.get("error") is None, result.header.get("error")
    claimed = set(result.header["claimed"])
    failed = {v.id: v.why for v in result.clauses if v.verdict == Verdict.FAILED}
    assert result.exit_status == 1
    must = d.must | (d.vectors_must if with_vectors else frozenset())
    missed = must - set(failed)
    assert not missed, f"{d.name} must fail {sorted(missed)}; the suite failed {sorted(failed)}"
    beyond = set(failed) - must - d.may
    assert not beyond, (f"{d.name} failed clauses it does not declare: "
                        + "; ".join(f"{c}: {failed[c]}" for c in sorted(beyond)))
    errored = [c.id for c in result.cases if c.outcome == "errored"]
    assert not errored, f"a broken implementation is failed, not errored: {errored}"
    other = {v.id: v.verdict for v in result.clauses if v.group in claimed
             and v.verdict not in (Verdict.PASSED, Verdict.FAILED, Verdict.INCONCLUSIVE,
                                   Verdict.SKIPPED)}
    assert not other, f"{d.name}: claimed clauses neither passed nor failed: {other}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_checks_fail_exactly_the_declared_clauses(name: str) -> None:
    judge(REGISTRY[name], with_vectors=False)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_checks_and_vectors_fail_exactly_the_declared_clauses(name: str) -> None:
    judge(REGISTRY[name], with_vectors=True)
