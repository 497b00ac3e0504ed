"""Seeded bugs: the Python side of the checks bites.  The same bugs seeded in the TLA+ spec
(tla/MCPausepointBug*.tla) make TLC print a counterexample (tla/results/MCPausepointBug*.txt)."""

from __future__ import annotations

import pytest

from pausepoint.core import lifecycle as lc
from pausepoint.system import model as m
from pausepoint_conformance.modelcheck import lockstep as mc

MODELS = mc.load_manifest()["models"]


def _cfg(name: str) -> m.Config:
    return mc.config_from_constants(MODELS[name]["constants"])


def test_resume_without_expiry_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant of the lifecycle table whose resume skips the expiry check."""
    broken = tuple(c for c in lc.RESUME_CHECKS if c.name != "expiry")
    assert len(broken) == len(lc.RESUME_CHECKS) - 1
    monkeypatch.setitem(lc.COMMON_CHECKS, lc.Resume, broken)
    ex = mc.explore(_cfg("MCPausepointLive"), fingerprints=False, stop_at_first=True)
    assert "NoConsumeAtOrAfterExpiry" in {v.invariant for v in ex.violations}
    first = ex.violations[0]
    assert first.trace[-1][0] == "ResumeCommit"
    # ... and the lockstep against TLC's state set fails too
    res = mc.lockstep("MCPausepointLive", MODELS["MCPausepointLive"])
    assert not res.ok and res.extra > 0


def _commit_without_version_check(cfg: m.Config, s: m.System, i: int) -> tuple[m.System, ...]:
    res = s.resumers[i]
    if res.phase != m.ResumerPhase.READ:
        return ()
    run = s.runs[res.run]
    slot = run.slots[res.slot]
    out = lc.step(res.seen, lc.Resume(now=s.now, response_digest=res.response))
    s2 = m._with_resumer(s, i, m.Resumer())
    if isinstance(out, lc.Refusal) or out.action != lc.Action.CONSUMED:
        return (s2,)
    new = m.Slot(slot.pc, slot.kind, out.state, slot.version + 1, slot.consumes + 1)
    run2 = m._continue_after(cfg, m._with_slot(run, res.slot, new), res.slot)
    return (m._with_run(s2, res.run, run2),)


def test_commit_without_version_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(m, "resume_commit", _commit_without_version_check)
    ex = mc.explore(_cfg("MCPausepoint"), fingerprints=False, stop_at_first=True)
    names = {v.invariant for v in ex.violations}
    assert names & {"AtMostOnceConsumption", "TerminalAbsorbing"}, names
    actions = [a for a, _ in ex.violations[0].trace]
    # a commit decided on a stale read: the row changed between ResumeRead and ResumeCommit
    assert actions[-1] == "ResumeCommit" and "ResumeRead" in actions


def test_the_unbroken_model_passes_the_same_checks() -> None:
    for name in ("MCPausepointLive",):
        ex = mc.explore(_cfg(name), fingerprints=False)
        assert ex.ok, ex.violations[:1]


def test_tlc_recorded_the_seeded_bugs_counterexamples() -> None:
    """What TLC printed when the bugs were seeded in the spec (tla/results/)."""
    for spec in MODELS.values():
        if spec.get("expect") != "violation":
            continue
        out = (mc.TLA_DIR / spec["result_file"]).read_text()
        assert spec["tlc"]["outcome"] == "violation"
        assert spec["tlc"]["violated"] in spec["violates"]
        violated = spec["tlc"]["violated"]
        assert (f" {violated} is violated" in out) or (
            f"Temporal property {violated} was violated" in out)
        assert ("The behavior up to this point is:" in out
                or "The following behavior constitutes a counter-example:" in out)
