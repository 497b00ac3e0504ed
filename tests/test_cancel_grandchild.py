"""cancel.propagates through a run that already finished: its children may still wait.
The model (and the TLA+ spec) once stopped the walk at a done run, which left a grandchild's
pause live under a cancelled grandparent; the service always walked through."""

from __future__ import annotations

from pausepoint.engine.harness import Harness
from pausepoint.system import model as m

THREE_LEVELS = m.Config(
    scripts=((m.Ask(("q",)), m.End()), (m.End(),), (m.Ask(("x",)), m.End())),
    parents=(None, 0, 1), ttl=2, max_time=0, resumers=0, responses=("yes",), max_crashes=0)


def test_model_keeps_cancel_propagated_through_a_done_run() -> None:
    """cancel.propagates"""
    init = m.initial(THREE_LEVELS)
    seen, frontier = {init}, [init]
    while frontier:
        nxt = []
        for s in frontier:
            for lab in m.successors(THREE_LEVELS, s):
                if lab.state not in seen:
                    seen.add(lab.state)
                    nxt.append(lab.state)
                    assert m.CancelPropagated(THREE_LEVELS, lab.state), lab.action
        frontier = nxt
    # the case that matters is reached: grandparent cancelled after the middle run finished
    assert any(s.runs[0].phase == m.RunPhase.CANCELLED and s.runs[1].phase == m.RunPhase.DONE
               and s.runs[2].slots for s in seen)


def test_harness_cancels_a_grandchild_through_a_done_run() -> None:
    """cancel.propagates"""
    h = Harness.open("memory:")
    h.start([{"op": "interrupt", "name": "ask"}, {"op": "end"}], run_id="g")
    assert h.start([{"op": "end"}], run_id="p", parent_run_id="g").status == "done"
    child = h.start([{"op": "interrupt", "name": "ask"}, {"op": "end"}], run_id="c",
                    parent_run_id="p")
    h.cancel("g")
    assert h.pause_state(child.pauses[0].interrupt_id) == "cancelled"
    assert h.run_status("c") == "cancelled"
