"""Lockstep, spec <-> code: the Python model explored exhaustively reaches exactly the states TLC
reached with the same constants (the recorded state sets in tla/results/), with TLC's counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pausepoint.system import model as m
from pausepoint.system import runmodel as rm
from pausepoint_conformance.modelcheck import lockstep as mc

MANIFEST = mc.load_manifest()
MODELS = MANIFEST["models"]


def _lockstep(name: str) -> mc.LockstepResult:
    return mc.lockstep(name, MODELS[name])


def test_main_model_is_in_lockstep_with_tlc() -> None:
    spec = MODELS["MCPausepoint"]
    assert spec["tlc"]["distinct"] >= 50_000
    res = _lockstep("MCPausepoint")
    ex = res.exploration
    assert ex.violations == ()
    assert (res.missing, res.extra) == (0, 0)
    assert ex.distinct == spec["tlc"]["distinct"]
    assert ex.depth == spec["tlc"]["depth"]
    assert ex.generated == spec["tlc"]["generated"]


def test_liveness_model_is_in_lockstep_with_tlc() -> None:
    res = _lockstep("MCPausepointLive")
    assert res.ok, res
    assert res.exploration.generated == MODELS["MCPausepointLive"]["tlc"]["generated"]


@pytest.mark.parametrize(("name", "action"), [("MCPausepointLive", "Tick"),
                                              ("MCPausepointRuns", "Redeliver")])
def test_a_changed_model_breaks_the_lockstep(name: str, action: str) -> None:
    """Drop one kind of step (the clock; at the run level, late continuations) from the
    Python side: the state sets differ."""
    def without(cfg: m.Config | rm.RunConfig, s: m.System | rm.World) -> list[object]:
        succ = rm.successors if isinstance(cfg, rm.RunConfig) else m.successors
        return [x for x in succ(cfg, s) if x.action != action]  # type: ignore[arg-type]
    res = mc.lockstep(name, MODELS[name], successors=without)
    assert not res.ok
    assert res.missing > 0 and res.extra == 0


def test_a_changed_state_set_breaks_the_lockstep(tmp_path: Path) -> None:
    """Drop one fingerprint from the recorded set: the check names one state TLC lacks."""
    spec = dict(MODELS["MCPausepointLive"])
    fps = mc.read_fingerprints(mc.TLA_DIR / spec["states_file"])
    (tmp_path / "results").mkdir()
    mc.write_fingerprints(tmp_path / spec["states_file"], fps[1:])
    res = mc.lockstep("MCPausepointLive", spec, tmp_path)
    assert (res.missing, res.extra) == (0, 1)
    assert not res.ok


@pytest.mark.parametrize("name", [n for n, s in MODELS.items() if s["kind"] in ("MC", "SIM")])
def test_model_modules_define_the_manifest_constants(name: str) -> None:
    assert mc.constants_problems(mc.TLA_DIR, name, MODELS[name]) == []


def test_constants_mismatch_is_caught(tmp_path: Path) -> None:
    spec = json.loads(json.dumps(MODELS["MCPausepoint"]))
    spec["constants"]["ttl"] += 1
    for f in ("MCPausepoint.tla", "MCPausepoint.cfg"):
        (tmp_path / f).write_text((mc.TLA_DIR / f).read_text())
    assert any("TTL" in p for p in mc.constants_problems(tmp_path, "MCPausepoint", spec))


def test_tlc_dump_syntax_parses_to_the_python_rendering() -> None:
    """The first states of TLC's own -dump (kept verbatim) parse to canonical strings that are
    in the recorded set, and TLC's initial state is model.initial's rendering."""
    spec = MODELS["MCPausepointLive"]
    text = (mc.TLA_DIR / spec["dump_head_file"]).read_text()
    states = [mc.canon(rec) for rec in mc.parse_states(text)]
    assert len(states) == mc.DUMP_HEAD_STATES
    recorded = set(mc.read_fingerprints(mc.TLA_DIR / spec["states_file"]))
    assert all(mc.fingerprint(s) in recorded for s in states)
    cfg = mc.config_from_constants(spec["constants"])
    assert states[0] == mc.render_state(m.initial(cfg))
    assert states[0] == mc.Renderer()(m.initial(cfg))


def test_renderer_and_parser_agree_on_reachable_states() -> None:
    cfg = mc.config_from_constants(MODELS["MCPausepointLive"]["constants"])
    render = mc.Renderer()
    s = m.initial(cfg)
    for _ in range(40):
        text = mc.render_state(s)
        assert render(s) == text
        assert mc.canon(mc.parse_value(text)) == text
        succ = list(m.successors(cfg, s))
        if not succ:
            break
        s = succ[len(succ) // 2].state


def test_parser_reads_tlc_value_forms() -> None:
    v = mc.parse_value('[b |-> {2, 1}, a |-> (1 :> "x" @@ 2 :> "y"), c |-> <<TRUE, -1>>]')
    assert mc.canon(v) == '[a|->[1|->"x",2|->"y"],b|->{1,2},c|-><<TRUE,-1>>]'
    with pytest.raises(ValueError):
        mc.parse_value("[a |-> 1] junk ?")


def test_config_constants_roundtrip() -> None:
    for spec in MODELS.values():
        if "constants" in spec and mc.is_run_level(spec):
            run_cfg = mc.run_config_from_constants(spec["constants"])
            assert mc.run_constants_from_config(run_cfg) == spec["constants"]
        elif "constants" in spec:
            cfg = mc.config_from_constants(spec["constants"])
            assert mc.constants_from_config(cfg) == spec["constants"]


def test_property_names_agree_between_spec_and_model() -> None:
    """Every property of model.py is defined under the same name in the spec and checked by
    the main model's cfg; the spec defines no invariant the model lacks."""
    spec = (mc.TLA_DIR / "Pausepoint.tla").read_text()
    cfg = (mc.TLA_DIR / "MCPausepoint.cfg").read_text()
    checked = set(" ".join(x.split(maxsplit=1)[1] for x in cfg.splitlines()
                           if x.startswith(("INVARIANTS", "PROPERTIES"))).split())
    names = set(m.INVARIANTS) | set(m.ACTION_PROPERTIES)
    for name in names:
        assert f"\n{name} ==" in spec, name
    assert checked == names


def test_tla_only_models_are_bigger_than_ci_and_recorded() -> None:
    """Models too big for the CI lockstep run only with TLC; each has TLC's figures."""
    for name in ("MCPausepointTree", "MCPausepointRace", "MCPausepointCrashes"):
        spec = MODELS[name]
        assert "states_file" not in spec
        assert spec["tlc"]["outcome"] == "pass" and spec["tlc"]["distinct"] > 0


def _reachable(cfg: m.Config) -> set[m.System]:
    """Every reachable state, collected by the explorer's invariant hook."""
    seen: set[m.System] = set()

    def collect(_cfg: m.Config, s: m.System) -> bool:
        seen.add(s)
        return True
    ex = mc.explore(cfg, fingerprints=False, invariants={"collect": collect},
                    action_properties={})
    assert ex.verdict == "pass"
    return seen


def test_the_ci_liveness_model_reaches_the_hard_cases() -> None:
    """The lockstep model with liveness exercises what the old models never did: a failed
    turn write, mark-unknown and reconcile on a live pause, a clock before/at/after the
    expiry, replay and conflict told to a resumer, and the cancel loop caught halfway."""
    cfg = mc.config_from_constants(MODELS["MCPausepointLive"]["constants"])
    seen = _reachable(cfg)
    slots = [(s, x) for s in seen for run in s.runs for x in run.slots]
    assert any(x.write == m.Write.FAILED for _, x in slots)
    assert any(x.kind == m.SlotKind.ASK and x.state.phase == m.Phase.UNKNOWN_OUTCOME
               for _, x in slots)
    assert any(x.kind == m.SlotKind.ASK and x.version >= 4
               and x.state.phase == m.Phase.RESUMABLE for _, x in slots)  # reconciled
    assert {s.now for s, _ in slots} >= {0, 1, 2}
    assert {x.state.expires_at for _, x in slots} == {1, 2, 3}
    told = {res.told for s in seen for res in s.resumers}
    assert {"consumed", "replayed", "response_conflict", "pause_expired", "pause_cancelled",
            "not_resumable", "outcome_unknown"} <= told
    assert any(run.cancel == m.CancelStep.SCANNED and run.phase == m.RunPhase.RUNNING
               for s in seen for run in s.runs)


# -- the run level (tla/PausepointRuns.tla, pausepoint.system.runmodel) ------------------------

RUN_LOCKSTEP = [n for n, spec in mc.lockstep_models(MANIFEST) if mc.is_run_level(spec)]


def test_the_run_level_has_lockstep_models() -> None:
    assert set(RUN_LOCKSTEP) == {"MCPausepointRuns", "MCPausepointRunsTree"}
    for name in RUN_LOCKSTEP:
        assert MODELS[name]["tlc"]["distinct"] >= 10_000
    # several restarters beside the servers: TLC only, recorded passing
    spec = MODELS["MCPausepointRunsRestarters"]
    assert "states_file" not in spec and spec["constants"]["restarters"] == 2
    assert spec["tlc"]["outcome"] == "pass" and spec["tlc"]["distinct"] > 0


@pytest.mark.parametrize("name", RUN_LOCKSTEP)
def test_run_level_model_is_in_lockstep_with_tlc(name: str) -> None:
    """runmodel explored exhaustively (every invariant, action property and the liveness
    property) reaches exactly TLC's states, with TLC's counts."""
    res = _lockstep(name)
    ex = res.exploration
    assert ex.violations == ()
    assert (res.missing, res.extra) == (0, 0)
    assert ex.distinct == MODELS[name]["tlc"]["distinct"]
    assert ex.depth == MODELS[name]["tlc"]["depth"]
    assert ex.generated == MODELS[name]["tlc"]["generated"]


def test_run_property_names_agree_between_spec_and_model() -> None:
    """Every property of runmodel.py is defined under the same name in PausepointRuns.tla and
    checked by each run-level lockstep model's cfg."""
    spec = (mc.TLA_DIR / "PausepointRuns.tla").read_text()
    names = set(rm.INVARIANTS) | set(rm.ACTION_PROPERTIES) | set(rm.LIVENESS)
    for name in names:
        assert f"\n{name} ==" in spec, name
    for model in RUN_LOCKSTEP:
        cfg = (mc.TLA_DIR / f"{model}.cfg").read_text()
        checked = set(" ".join(x.split(maxsplit=1)[1] for x in cfg.splitlines()
                               if x.startswith(("INVARIANTS", "PROPERTIES"))).split())
        assert checked == names
        assert "SPECIFICATION LiveSpec" in cfg


def test_run_renderer_is_the_tlc_syntax() -> None:
    """TLC's initial state of the run level (its own output, recorded with the results) parses
    to runmodel.initial's rendering."""
    out = (mc.TLA_DIR / MODELS["MCPausepointRunsBugUnfencedProgress"]["result_file"]).read_text()
    first = next(mc.parse_states(out[out.index("State 1:"):]))
    cfg = mc.run_config_from_constants(MODELS["MCPausepointRunsBugUnfencedProgress"]["constants"])
    assert mc.canon(first) == mc.WorldRenderer()(rm.initial(cfg))
    assert mc.canon(first) == mc.canon(mc.world_value(rm.initial(cfg)))


def test_the_run_models_reach_the_hard_cases() -> None:
    """The run-level lockstep models exercise what issue 8 names: a live owner's lease running
    out and a restarter taking over (the old driver fenced), a crash inside an effect and its
    recovery pause reconciled, a store failure releasing the run, a cancel while an effect is in
    flight, a late continuation refused, a child started and cancelled with its parent."""
    seen: set[rm.World] = set()
    steps: set[str] = set()

    def collect(_cfg: rm.RunConfig, s: rm.World) -> bool:
        seen.add(s)
        return True

    def labelled(cfg: rm.RunConfig, s: rm.World) -> list[rm.Labelled]:
        out = list(rm.successors(cfg, s))
        steps.update(x.action for x in out)
        return out
    for name in RUN_LOCKSTEP:
        cfg = mc.run_config_from_constants(MODELS[name]["constants"])
        ex = mc.explore(cfg, fingerprints=False, invariants={"collect": collect},
                        action_properties={}, liveness={}, successors=labelled)
        assert ex.verdict == "pass"
    assert {"Recover", "LeaseExpire", "Crash", "StoreFail", "Reconcile", "AnswerRecovery",
            "Redeliver", "CancelBegin", "CancelScan", "CancelFinish", "StartRun"} <= steps
    runs = [(w, run) for w in seen for run in w.store]
    assert any(run.status == "cancelling" and any(x.phase == "in_effect" for x in w.procs)
               for w, run in runs)
    assert any(run.expired and any(x.phase == "drive" and x.epoch == run.epoch
                                   for x in w.procs) for w, run in runs)
    assert any("resumable" in rec for _, run in runs for rec in run.recov)
    assert any(run.status == "running" and run.owner == 0 for _, run in runs)  # released
    assert any(run.epoch >= 4 for _, run in runs)
    assert any(w.store[1].status == "cancelled" and w.store[0].status == "cancelled"
               for w in seen if len(w.store) == 2)
