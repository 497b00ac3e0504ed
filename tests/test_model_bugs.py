"""Seeded design bugs: each property of the spec and of model.py catches a bug of its own.

Every bug of ``model.SEEDED_BUGS`` is a model of ``tla/manifest.json`` (``seeded_bug``) whose
cfg checks only the property that must catch it: TLC printed that property's counterexample
(``tla/results/``), model.py built with the same bug fails the same property of its *own*
(``model.INVARIANTS`` / ``model.ACTION_PROPERTIES``, not the frozen state-set comparison),
and without the bug the same constants pass every property."""

from __future__ import annotations

import attrs
import pytest

from pausepoint.system import model as m
from pausepoint.system import runmodel as rm
from pausepoint_conformance.modelcheck import lockstep as mc

MODELS = mc.load_manifest()["models"]
BUG_MODELS = {spec["seeded_bug"]: name for name, spec in MODELS.items() if spec.get("seeded_bug")}


def _cfg(name: str) -> m.Config:
    return mc.config_from_constants(MODELS[name]["constants"])


def test_every_seeded_bug_has_a_model_and_every_property_a_bug() -> None:
    assert set(BUG_MODELS) == set(m.SEEDED_BUGS) | set(rm.SEEDED_BUGS)
    assert not set(m.SEEDED_BUGS) & set(rm.SEEDED_BUGS)
    caught = {prop for prop, _ in m.SEEDED_BUGS.values()}
    # every property has a design bug that only it is asked to catch, but the type invariant
    # and the properties older than the seeded bugs (caught by the lockstep and the tests of
    # the lifecycle table)
    older = {"TypeOK", "ResumableHasTurn", "EffectsAtMostOnce", "NoResumeWhileUnknown",
             "PausedRunHasPausePoints", "TerminalAbsorbing"}
    everything = set(m.INVARIANTS) | set(m.ACTION_PROPERTIES)
    assert caught | older == everything, everything - caught - older


@pytest.mark.parametrize("bug", sorted(m.SEEDED_BUGS))
def test_python_model_with_the_bug_fails_its_own_property(bug: str) -> None:
    prop, _ = m.SEEDED_BUGS[bug]
    cfg = _cfg(BUG_MODELS[bug])
    assert cfg.seeded_bugs == frozenset({bug})
    invs = {k: v for k, v in m.INVARIANTS.items() if k == prop}
    acts = {k: v for k, v in m.ACTION_PROPERTIES.items() if k == prop}
    ex = mc.explore(cfg, fingerprints=False, invariants=invs, action_properties=acts)
    assert ex.verdict == "violation", bug
    assert ex.violations[0].invariant == prop
    # ... and the same constants without the bug pass every property
    clean = mc.explore(attrs.evolve(cfg, seeded_bugs=frozenset()), fingerprints=False)
    assert clean.verdict == "pass", clean.violations[:1]


@pytest.mark.parametrize("bug", sorted(m.SEEDED_BUGS) + sorted(rm.SEEDED_BUGS))
def test_tlc_recorded_the_seeded_bugs_counterexample(bug: str) -> None:
    """What TLC printed when the bug was seeded in the spec (tla/results/)."""
    spec = MODELS[BUG_MODELS[bug]]
    prop, _ = {**m.SEEDED_BUGS, **rm.SEEDED_BUGS}[bug]
    assert spec["expect"] == "violation" and spec["violates"] == [prop]
    assert spec["tlc"]["outcome"] == "violation" and spec["tlc"]["violated"] == prop
    out = (mc.TLA_DIR / spec["result_file"]).read_text()
    if prop in rm.LIVENESS:
        assert f"Temporal property {prop} was violated" in out
        assert "The following behavior constitutes a counter-example:" in out
    else:
        assert f" {prop} is violated" in out
        assert "The behavior up to this point is:" in out


# -- the run level (issue 8's six failures) ----------------------------------------------------

RUN_PROPERTIES = {**rm.INVARIANTS, **rm.ACTION_PROPERTIES, **rm.LIVENESS}


def test_every_run_level_property_has_a_bug() -> None:
    caught = {prop for prop, _ in rm.SEEDED_BUGS.values()}
    # CancellingRunEnds has no seeded bug here: a restart that skips cancelling runs violates
    # it only under fairness (TLC shows the crashed canceller's run cancelling for ever), while
    # the explorer's reachability form cannot tell -- a server's retried cancel could always
    # still end it.  tests/test_run_engine.py and tests/test_crash.py catch that restart.
    assert caught | {"RunTypeOK", "NoEffectAfterCancel", "EpochNeverDecreases",
                     "CancellingRunEnds"} == set(RUN_PROPERTIES)


@pytest.mark.parametrize("bug", sorted(rm.SEEDED_BUGS))
def test_run_model_with_the_bug_fails_its_own_property(bug: str) -> None:
    """runmodel.py built with the bug fails the property TLC reported, found by the Python
    explorer alone (a liveness property: a reachable state from which the run can never move
    on); the same constants without the bug pass every property."""
    prop, _ = rm.SEEDED_BUGS[bug]
    spec = MODELS[BUG_MODELS[bug]]
    assert mc.is_run_level(spec)
    cfg = mc.run_config_from_constants(spec["constants"])
    assert cfg.seeded_bugs == frozenset({bug})
    ex = mc.explore(cfg, fingerprints=False,
                    invariants={k: v for k, v in rm.INVARIANTS.items() if k == prop},
                    action_properties={k: v for k, v in rm.ACTION_PROPERTIES.items()
                                       if k == prop},
                    liveness={k: v for k, v in rm.LIVENESS.items() if k == prop})
    assert ex.verdict == "violation", bug
    assert ex.violations[0].invariant == prop
    clean = mc.explore(attrs.evolve(cfg, seeded_bugs=frozenset()), fingerprints=False)
    assert clean.verdict == "pass", clean.violations[:1]


def test_the_run_explorer_finds_each_properties_violation_without_its_guard() -> None:
    """The properties no seeded bug is named for fail too when their guard goes: an effect
    journalled after the cancel (the journal start without its epoch condition) is caught by
    NoEffectAfterCancel, a fenced writer restoring its epoch by EpochNeverDecreases."""
    cfg = mc.run_config_from_constants(
        MODELS["MCPausepointRunsBugJournalUpsert"]["constants"])
    cfg = attrs.evolve(cfg, servers=2, seeded_bugs=frozenset({"journal_upsert"}))
    ex = mc.explore(cfg, fingerprints=False,
                    invariants={"NoEffectAfterCancel": rm.NoEffectAfterCancel},
                    action_properties={}, liveness={})
    assert [v.invariant for v in ex.violations] == ["NoEffectAfterCancel"]
    cfg = mc.run_config_from_constants(
        MODELS["MCPausepointRunsBugUnfencedProgress"]["constants"])
    ex = mc.explore(cfg, fingerprints=False, invariants={},
                    action_properties={"EpochNeverDecreases": rm.EpochNeverDecreases},
                    liveness={})
    assert [v.invariant for v in ex.violations] == ["EpochNeverDecreases"]


def test_liveness_without_fairness_fails_in_tlc() -> None:
    spec = MODELS["MCPausepointLiveNoFairness"]
    out = (mc.TLA_DIR / spec["result_file"]).read_text()
    assert spec["tlc"]["violated"] in spec["violates"]
    assert f"Temporal property {spec['tlc']['violated']} was violated" in out
    assert "The following behavior constitutes a counter-example:" in out


def test_the_explorer_stops_at_the_first_violation() -> None:
    cfg = _cfg(BUG_MODELS["no_version_check"])
    ex = mc.explore(cfg, fingerprints=False)
    full = mc.explore(cfg, fingerprints=False, stop_at_first=False)
    assert len(ex.violations) == 1 and len(full.violations) > 1
    assert ex.distinct < full.distinct


def test_the_explorer_stops_at_a_state_bound_with_a_verdict() -> None:
    ex = mc.explore(_cfg("MCPausepointLive"), fingerprints=False, max_states=500)
    assert ex.verdict == "bound" and not ex.ok
    assert ex.distinct == 500
