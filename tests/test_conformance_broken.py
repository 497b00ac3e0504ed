"""Every conformance check is shown to bite: each deliberately broken implementation in
``tests/broken/`` -- the reference with one piece swapped for a plausible bug -- is driven over
the stdio protocol, and the suite must fail it for the clause its bug breaks (and exit 1).

Each implementation, its bug, and the clause it must fail:

- ``double_consume``: version-blind conditional update -- `resume.consume.single-winner`
- ``resume_after_expiry``: a stale clock in the resume path -- `resume.expiry`
- ``altered_token``: the token's claims trusted without verifying -- `token.integrity`
- ``cross_scope``: the scope taken from the token, not the request -- `resume.binding.scope`
- ``resumable_early``: resumable at issue, before the checkpoint write --
  `turn.resumable.earned`
- ``rerun_pre_pause``: the step re-entered from its top on resume -- `effect.at-most-once`
- ``unknown_retried``: a journal that forgets unfinished effects -- `effect.unknown-outcome`
- ``cancel_ignored``: cancel leaves the pauses live -- `cancel.distinct`
- ``replay_any``: any later answer swapped for the first -- `replay.different-response.conflict`
- ``sibling_disturbed``: the first of several answers cancels the rest -- `multi.independent`
- ``refusal_side_effect``: the next effect runs before the request is validated --
  `effect.refusal.no-effect`
- ``payload_unchecked``: every payload schema registered as "anything" -- `pause.payload.schema`
- ``authority_ignored``: the restricted interaction registered without its authority --
  `resume.authority`
- ``cancel_not_propagated``: a run store that knows no children -- `cancel.propagates`
- ``not_durable``: a volatile store claimed durable -- `durability.restart`
- ``session_ignored``: the session taken from the token, not the request -- `resume.binding.run`
- ``gate_always_asks``: every gate step realised as an approve interrupt -- `gate.separate`
- ``retire_undrained``: a drain proof that always says 0: keys retired with tokens outstanding
  -- `token.rotation.drain`
- ``status_paused_only``: a status read from the run record only: every paused run "safely
  suspended" -- `status.distinguishes`
- ``checkpoint_optional``: a checkpoint id made up for a pause bound to none --
  `pause.checkpoint.bound`
- ``signal_is_exception``: the pause signal an `Exception`: user code's catch-all swallows it --
  `pause.signal.base-exception`
- ``pause_as_error``: a runner catching `BaseException` reports the pause as an error --
  `pause.signal.single-catch`
- ``wiring_unchecked``: a composition function that wires whatever it is given --
  `wiring.consistent`
- ``ask_tool_always``: the ask-the-user tool offered with no interaction registered --
  `wiring.no-interaction-no-tool`
- ``answer_goes_next``: a resume routed to what the run waits on now, not the token's pause --
  `replay.same-response`
- ``surrogates_accepted``: payloads and responses bounded but not checked to be Unicode text --
  `input.bounded`
- ``strict_response_lax``: responses validated in pydantic's lax mode, so ``"false"`` fits a
  bool -- `resume.response.strict`
- ``digest_unkeyed``: the token's payload digest an unkeyed SHA-256 of the payload --
  `token.discloses`
- ``python_canonical``: answers compared as Python ``json.dumps`` text, not RFC 8785 --
  `input.canonical`
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pausepoint.core.clauses import CLAUSE_BY_ID
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite.runner import Verdict, run_suite

BROKEN = Path(__file__).parent / "broken"
IMPLEMENTATIONS = sorted(p for p in BROKEN.glob("*.py") if not p.name.startswith("_"))


def load(path: Path) -> ModuleType:
    sys.path.insert(0, str(BROKEN))
    try:
        spec = importlib.util.spec_from_file_location(f"broken_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BROKEN))


def test_there_is_one_broken_implementation_per_clause_family() -> None:
    names = {p.stem for p in IMPLEMENTATIONS}
    assert {"double_consume", "resume_after_expiry", "altered_token", "cross_scope",
            "resumable_early", "rerun_pre_pause", "unknown_retried", "cancel_ignored",
            "replay_any", "sibling_disturbed", "refusal_side_effect", "checkpoint_optional",
            "signal_is_exception", "pause_as_error", "wiring_unchecked",
            "ask_tool_always", "answer_goes_next"} <= names
    groups = {CLAUSE_BY_ID[load(p).EXPECTED[0]].group for p in IMPLEMENTATIONS}
    assert len(groups) >= 8, groups


@pytest.mark.parametrize("path", IMPLEMENTATIONS, ids=lambda p: p.stem)
def test_the_suite_fails_the_broken_implementation_for_the_right_clause(path: Path) -> None:
    expected = load(path).EXPECTED
    assert expected and all(c in CLAUSE_BY_ID for c in expected)
    adapter = StdioAdapter([sys.executable, str(path)], timeout=60)
    try:
        result = run_suite(adapter, adapter_name=path.stem)
    finally:
        adapter.close()
    assert result.header.get("error") is None, result.header.get("error")
    failed = {v.id: v.why for v in result.clauses if v.verdict == Verdict.FAILED}
    assert result.exit_status == 1
    assert set(expected) & set(failed), (
        f"{path.stem} must fail {expected}; the suite failed {sorted(failed)}")
    errored = [c.id for c in result.cases if c.outcome == "errored"]
    assert not errored, f"a broken implementation is failed, not errored: {errored}"
