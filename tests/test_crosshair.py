"""CrossHair on every transition: lifecycle.step, through the contracted wrappers of
pausepoint.core.contracts, preserves every invariant of lifecycle.PAUSE_INVARIANTS (pre: they hold,
post: they still hold).  CrossHair finds no counterexample there, and does find one for a
deliberately broken transition built here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pausepoint.core import contracts
from pausepoint.core import lifecycle as lc

CONTRACTS = Path(contracts.__file__)
PER_CONDITION = "6"


def crosshair(*targets: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("crosshair")
    cmd = [str(exe) if exe.exists() else "crosshair", "check", "--analysis_kind=PEP316",
           f"--per_condition_timeout={PER_CONDITION}", *targets]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=cwd,
                          check=False)  # the tests read the return code and output


def test_every_transition_preserves_the_invariants() -> None:
    proc = crosshair(str(CONTRACTS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stdout.lower()


BROKEN = textwrap.dedent('''
    """Broken variants of the lifecycle, built from the table's own pieces."""
    from pausepoint.core import lifecycle as lc
    from pausepoint.core.contracts import preserved
    from pausepoint.core.lifecycle import invariants_hold


    def _step_with(state: lc.PauseState, event: lc.Event, drop: str) -> lc.StepOutcome:
        """lifecycle.step with the check named ``drop`` left out (common or of the row)."""
        for check in lc.COMMON_CHECKS.get(type(event), ()):
            if check.name != drop and not check.holds(state, event):
                return lc.Refusal(check.clause, check.code, check.message)
        row = lc.row_for(state, event)
        for check in row.checks:  # expiry is a check of the rows: dropped here too
            if check.name != drop and not check.holds(state, event):
                return lc.Refusal(check.clause, check.code, check.message)
        if row.refuse is not None:
            return lc.Refusal(row.clause, row.refuse, row.message)
        assert row.action is not None
        target = row.target.pick(state) if isinstance(row.target, lc.Choice) else row.target
        new = (row.update(state, event, target) if row.update
               else lc.attrs.evolve(state, phase=target))
        return lc.Accepted(new, row.action, row.clause)


    def resume_without_expiry_check(state: lc.PauseState, event: lc.Resume) -> lc.StepOutcome:
        """
        pre: invariants_hold(state)
        post: preserved(state, __return__)
        """
        return _step_with(state, event, drop="expiry")


    def reconcile_to_resumable_always(state: lc.PauseState, event: lc.Reconcile) -> lc.StepOutcome:
        """
        pre: invariants_hold(state)
        post: preserved(state, __return__)
        """
        out = lc.step(state, event)
        if isinstance(out, lc.Accepted):  # a row that ignores whether the turn was recorded
            return lc.Accepted(lc.attrs.evolve(out.state, phase=lc.Phase.RESUMABLE),
                               out.action, out.clause)
        return out
''')


def test_a_broken_transition_is_caught(tmp_path: Path) -> None:
    (tmp_path / "broken_lifecycle.py").write_text(BROKEN)
    proc = crosshair("broken_lifecycle.py", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "false when calling resume_without_expiry_check" in out
    assert "false when calling reconcile_to_resumable_always" in out
    assert "Phase.RESUMABLE" in out


def test_the_wrappers_are_step() -> None:
    s = lc.PauseState(phase=lc.Phase.RESUMABLE, expires_at=5, turn_recorded=True)
    late = lc.Resume(now=5, response_digest="yes")
    assert contracts.checked_resume(s, late) == lc.step(s, late)
    assert isinstance(contracts.checked_resume(s, late), lc.Refusal)
    ok = contracts.checked_step(s, lc.Resume(now=4, response_digest="yes"))
    assert isinstance(ok, lc.Accepted) and contracts.preserved(s, ok)


def test_preserved_rejects_a_bad_outcome() -> None:
    s = lc.PauseState(phase=lc.Phase.RESUMABLE, expires_at=5, turn_recorded=True)
    bad = lc.Accepted(lc.PauseState(phase=lc.Phase.CONSUMED, expires_at=5, consumed_at=5,
                                    response_digest="yes"), lc.Action.CONSUMED, "x")
    assert not contracts.preserved(s, bad)
    assert not contracts.preserved(s, lc.Accepted(lc.PauseState(phase=lc.Phase.RESUMABLE),
                                                  lc.Action.RECONCILED, "x"))


@pytest.mark.parametrize("fn", [f for f in contracts.__all__ if f.startswith("checked_")])
def test_every_wrapper_carries_the_contract(fn: str) -> None:
    doc = getattr(contracts, fn).__doc__ or ""
    assert "pre: invariants_hold(state)" in doc
    assert "post: preserved(state, __return__)" in doc


def test_every_event_type_has_a_contracted_wrapper() -> None:
    import typing
    covered = set()
    for fn in contracts.__all__:
        if fn.startswith("checked_") and fn != "checked_step":
            covered.add(typing.get_type_hints(getattr(contracts, fn))["event"])
    assert covered == set(lc.EVENT_TYPES)
