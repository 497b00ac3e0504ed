"""Tests of the pure lifecycle machine: the table, the refusal orders, absorbing terminal phases,
refusals that change nothing, and the per-pause invariants over every reachable state.

Expected outcomes here are written out independently of the table (a second transcription of
the clause text), so a table that drifts from the contract fails.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from functools import cache

import attrs
import pytest

from pausepoint.core import lifecycle as lc
from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode, clause
from pausepoint.core.lifecycle import (
    LIVE,
    TERMINAL,
    Accepted,
    Action,
    Cancel,
    Expire,
    MarkUnknown,
    Pause,
    PauseState,
    Phase,
    Reconcile,
    RecordTurn,
    Refusal,
    Resolution,
    Resume,
)

E = ErrorCode
EXPIRES = 10

# -- the table -------------------------------------------------------------------------------


def test_phases_are_exactly_the_seven_states() -> None:
    """`lifecycle.states`: a pause point is in exactly one of seven named phases."""
    assert {p.value for p in Phase} == {
        "running", "paused", "resumable", "consumed", "expired", "unknown_outcome", "cancelled"}
    assert {Phase.CONSUMED, Phase.EXPIRED, Phase.CANCELLED} == TERMINAL
    assert {Phase.PAUSED, Phase.RESUMABLE, Phase.UNKNOWN_OUTCOME} == LIVE
    assert not (TERMINAL & LIVE) and TERMINAL | LIVE | {Phase.RUNNING} == set(Phase)


def test_table_is_total_with_one_row_per_event_and_phase() -> None:
    """`lifecycle.transition.table`: exactly one row for every (event kind, phase)."""
    keys = [(row.event, row.source) for row in lc.TABLE]
    assert len(keys) == len(set(keys)), "two rows for one (event, phase)"
    assert set(keys) == set(itertools.product(lc.EVENT_TYPES, Phase))
    for event_type, phase in itertools.product(lc.EVENT_TYPES, Phase):
        row = lc.row_for(PauseState(phase=phase), sample_event(event_type))
        assert (row.event, row.source) == (event_type, phase)


def test_every_row_and_check_names_an_existing_clause() -> None:
    """Every row and every check of the table cites a clause of the catalogue, refusing rows
    carry a code of the closed set, accepting rows say what they do
    (`lifecycle.transition.table`)."""
    checks = [*lc.PAUSE_CHECKS, *lc.RESUME_CHECKS,
              *(c for row in lc.TABLE for c in row.checks)]
    for row in lc.TABLE:
        assert row.clause in CLAUSE_BY_ID, row
        if row.refuse is not None:
            assert row.refuse in set(ErrorCode) and row.action is None and row.message, row
        else:
            assert row.action in set(Action), row
            assert row.target is not None or row.update is not None, row
    for check in checks:
        assert check.clause in CLAUSE_BY_ID and check.code in set(ErrorCode), check


def test_accepting_edges_never_leave_a_terminal_phase() -> None:
    """`lifecycle.terminal.absorbing` at the level of the diagram's edges."""
    for source, _name, target in lc.transitions():
        if source in TERMINAL:
            assert target == source


# -- events ----------------------------------------------------------------------------------


def sample_event(event_type: type[lc.Event]) -> lc.Event:
    samples: dict[type[lc.Event], lc.Event] = {
        Pause: Pause(expires_at=EXPIRES), RecordTurn: RecordTurn(True),
        Resume: Resume(now=0, response_digest="a"), Expire: Expire(now=EXPIRES),
        Cancel: Cancel(), MarkUnknown: MarkUnknown(), Reconcile: Reconcile(Resolution.APPLIED),
    }
    return samples[event_type]


PAUSE_FLAGS = ("registered", "payload_valid", "checkpoint_bound", "tool_call_bound")
RESUME_FLAGS = ("authentic", "binding_ok", "scope_ok", "authorized", "response_valid")


def alphabet() -> Iterator[lc.Event]:
    """A small event alphabet: every flag false in turn, clock readings around the expiry,
    two responses, every resolution."""
    yield Pause(expires_at=EXPIRES)
    for f in PAUSE_FLAGS:
        yield Pause(expires_at=EXPIRES, **{f: False})
    yield RecordTurn(True)
    yield RecordTurn(False)
    for now in (0, EXPIRES - 1, EXPIRES, EXPIRES + 1):
        for d in ("a", "b"):
            yield Resume(now=now, response_digest=d)
        yield Expire(now=now)
    for f in RESUME_FLAGS:
        yield Resume(now=0, response_digest="a", **{f: False})
    yield Cancel()
    yield MarkUnknown()
    for r in Resolution:
        yield Reconcile(r)


@cache
def reachable(m: lc.Machine = lc.MACHINE) -> frozenset[PauseState]:
    """Every state reachable from ``PauseState()`` over :func:`alphabet` (breadth first)."""
    seen = {PauseState()}
    todo = deque(seen)
    while todo:
        s = todo.popleft()
        for e in alphabet():
            out = m.step(s, e)
            if isinstance(out, Accepted) and out.state not in seen:
                seen.add(out.state)
                todo.append(out.state)
    return frozenset(seen)



def test_reachable_set_is_not_vacuous(m: lc.Machine = lc.MACHINE) -> None:
    assert {s.phase for s in reachable(m)} == set(Phase)
    assert any(s.phase == Phase.CONSUMED and s.response_digest == "b" for s in reachable(m))
    assert any(s.phase == Phase.UNKNOWN_OUTCOME and not s.turn_recorded for s in reachable(m))


# -- pause: refusal order --------------------------------------------------------------------

PAUSE_LADDER = [
    pytest.param("registered", E.INTERACTION_UNREGISTERED, "pause.interaction.registered",
                 id="pause.interaction.registered"),
    pytest.param("payload_valid", E.PAYLOAD_INVALID, "pause.payload.schema",
                 id="pause.payload.schema"),
    pytest.param("checkpoint_bound", E.CHECKPOINT_MISSING, "pause.checkpoint.bound",
                 id="pause.checkpoint.bound"),
    pytest.param("tool_call_bound", E.TOOL_CALL_ID_MISSING, "pause.tool-call.bound",
                 id="pause.tool-call.bound"),
]


@pytest.mark.parametrize(("flag", "code", "cited"), PAUSE_LADDER)
def test_pause_refusal_order_each_check_in_turn(flag: str, code: ErrorCode, cited: str,
                                                m: lc.Machine = lc.MACHINE) -> None:
    """`pause.refusal.order`: with every earlier check passing and this and every later one
    failing, this check decides the code and clause."""
    i = PAUSE_FLAGS.index(flag)
    facts = {f: j < i for j, f in enumerate(PAUSE_FLAGS)}
    out = m.step(PauseState(), Pause(expires_at=EXPIRES, **facts))
    assert isinstance(out, Refusal), out
    assert (out.code, out.clause) == (code, clause(cited))


def expected_pause(facts: dict[str, bool]) -> ErrorCode | None:
    order = [("registered", E.INTERACTION_UNREGISTERED), ("payload_valid", E.PAYLOAD_INVALID),
             ("checkpoint_bound", E.CHECKPOINT_MISSING),
             ("tool_call_bound", E.TOOL_CALL_ID_MISSING)]
    for f, code in order:
        if not facts[f]:
            return code
    return None


def test_pause_first_failing_check_decides_for_every_combination(
        m: lc.Machine = lc.MACHINE) -> None:
    """`pause.refusal.order`, `pause.refusal.before-mint`: all 16 combinations of the four facts;
    accepted only when all hold, and then the state is paused with the expiry set."""
    for bits in itertools.product((True, False), repeat=4):
        facts = dict(zip(PAUSE_FLAGS, bits, strict=True))
        out = m.step(PauseState(), Pause(expires_at=EXPIRES, **facts))
        want = expected_pause(facts)
        if want is None:
            assert out == Accepted(PauseState(Phase.PAUSED, EXPIRES), Action.PAUSED,
                                   "pause.refusal.before-mint")
        else:
            assert isinstance(out, Refusal) and out.code == want, (facts, out)


def test_a_second_pause_of_a_live_pause_point_is_refused(m: lc.Machine = lc.MACHINE) -> None:
    """`lifecycle.transition.table`: pause only from running."""
    for s in reachable(m):
        if s.phase != Phase.RUNNING:
            out = m.step(s, Pause(expires_at=EXPIRES))
            assert isinstance(out, Refusal)
            assert out.code in {E.INVALID_TRANSITION, E.PAUSE_CONSUMED, E.PAUSE_EXPIRED,
                                E.PAUSE_CANCELLED}


# -- resume: refusal order -------------------------------------------------------------------

RESUMABLE = PauseState(Phase.RESUMABLE, EXPIRES, turn_recorded=True)


def expected_resume(s: PauseState, e: Resume) -> ErrorCode | Action:
    """The order of `resume.refusal.order`, transcribed from its text: authenticity, expiry,
    binding, scope, authority, decided state, response schema, unknown outcome, turn
    recorded."""
    if not e.authentic:
        return E.TOKEN_INVALID
    if s.phase == Phase.EXPIRED or (s.phase in LIVE and e.now >= s.expires_at):
        return E.PAUSE_EXPIRED
    if not e.binding_ok:
        return E.BINDING_MISMATCH
    if not e.scope_ok:
        return E.SCOPE_MISMATCH
    if not e.authorized:
        return E.RESPONDER_UNAUTHORIZED
    if s.phase == Phase.CONSUMED:
        return Action.REPLAYED if e.response_digest == s.response_digest else E.RESPONSE_CONFLICT
    if s.phase == Phase.CANCELLED:
        return E.PAUSE_CANCELLED
    if s.phase == Phase.RUNNING:
        return E.INVALID_TRANSITION
    if not e.response_valid:
        return E.RESPONSE_INVALID
    if s.phase == Phase.UNKNOWN_OUTCOME:
        return E.OUTCOME_UNKNOWN
    if s.phase == Phase.PAUSED:
        return E.NOT_RESUMABLE
    return Action.CONSUMED


RESUME_LADDER = [
    pytest.param(RESUMABLE, {"authentic": False}, E.TOKEN_INVALID, "resume.token.authentic",
                 id="resume.token.authentic"),
    pytest.param(RESUMABLE, {"now": EXPIRES}, E.PAUSE_EXPIRED, "resume.expiry",
                 id="resume.expiry"),
    pytest.param(RESUMABLE, {"binding_ok": False}, E.BINDING_MISMATCH, "resume.binding.run",
                 id="resume.binding.run"),
    pytest.param(RESUMABLE, {"scope_ok": False}, E.SCOPE_MISMATCH, "resume.binding.scope",
                 id="resume.binding.scope"),
    pytest.param(RESUMABLE, {"authorized": False}, E.RESPONDER_UNAUTHORIZED, "resume.authority",
                 id="resume.authority"),
    pytest.param(attrs.evolve(RESUMABLE, phase=Phase.CONSUMED, response_digest="b",
                              consumed_at=0), {},
                 E.RESPONSE_CONFLICT, "replay.different-response.conflict",
                 id="replay.different-response.conflict"),
    pytest.param(attrs.evolve(RESUMABLE, phase=Phase.CANCELLED), {}, E.PAUSE_CANCELLED,
                 "cancel.distinct", id="cancel.distinct"),
    pytest.param(attrs.evolve(RESUMABLE, phase=Phase.EXPIRED), {"now": 0}, E.PAUSE_EXPIRED,
                 "resume.expiry", id="expired-phase"),
    pytest.param(RESUMABLE, {"response_valid": False}, E.RESPONSE_INVALID,
                 "resume.response.schema", id="resume.response.schema"),
    pytest.param(attrs.evolve(RESUMABLE, phase=Phase.UNKNOWN_OUTCOME), {}, E.OUTCOME_UNKNOWN,
                 "resume.unknown-outcome.blocks", id="resume.unknown-outcome.blocks"),
    pytest.param(PauseState(Phase.PAUSED, EXPIRES), {}, E.NOT_RESUMABLE,
                 "turn.write-failed.stays-paused", id="turn.write-failed.stays-paused"),
]
LATER_FAILURES = {"authentic": False, "now": EXPIRES, "binding_ok": False, "scope_ok": False,
                  "authorized": False, "response_valid": False}
ORDER = list(LATER_FAILURES)


@pytest.mark.parametrize(("state", "fail", "code", "cited"), RESUME_LADDER)
def test_resume_refusal_order_each_check_in_turn(state: PauseState, fail: dict[str, object],
                                                 code: ErrorCode, cited: str,
                                                 m: lc.Machine = lc.MACHINE) -> None:
    """`resume.refusal.order`: this check fails, every earlier one passes, and every later
    per-request check fails too -- yet this one decides the code and clause."""
    later: dict[str, object] = {}
    if fail:
        (name,) = fail
        later = {k: v for k, v in LATER_FAILURES.items() if ORDER.index(k) > ORDER.index(name)}
    elif state.phase in TERMINAL:  # a decided phase: the response check comes later
        later = {"response_valid": False}
    fields: dict[str, object] = {"now": 0, "response_digest": "a", **later, **fail}
    out = m.step(state, Resume(**fields))  # type: ignore[arg-type]
    assert isinstance(out, Refusal), out
    assert (out.code, out.clause) == (code, clause(cited))


def test_resume_outcome_for_every_reachable_state_and_fact_combination(
        m: lc.Machine = lc.MACHINE) -> None:
    """`resume.refusal.order`, `race.decided-once`, `replay.same-response`: the table agrees
    with the clause-order transcription for every reachable state, every combination of the
    five request facts, clock readings around the expiry and both responses."""
    n = 0
    for s in reachable(m):
        for bits in itertools.product((True, False), repeat=5):
            for now in (0, EXPIRES - 1, EXPIRES, EXPIRES + 1):
                for d in ("a", "b"):
                    e = Resume(now=now, response_digest=d,
                               **dict(zip(RESUME_FLAGS, bits, strict=True)))
                    out = m.step(s, e)
                    want = expected_resume(s, e)
                    got = out.action if isinstance(out, Accepted) else out.code
                    assert got == want, (s, e, out)
                    n += 1
    assert n > 1000


def test_consume_records_the_response_and_time(m: lc.Machine = lc.MACHINE) -> None:
    """`resume.consume.at-most-once`, `resume.continuation.recorded-turn`: a consume records
    the response digest and when, keeps the turn, and a second consume is impossible."""
    out = m.step(RESUMABLE, Resume(now=3, response_digest="a"))
    assert out == Accepted(attrs.evolve(RESUMABLE, phase=Phase.CONSUMED, response_digest="a",
                                        consumed_at=3), Action.CONSUMED,
                           "resume.consume.single-winner")
    assert isinstance(out, Accepted)
    again = m.step(out.state, Resume(now=4, response_digest="a"))
    assert isinstance(again, Accepted) and again.action == Action.REPLAYED
    assert again.state == out.state


# -- other events ----------------------------------------------------------------------------


def test_record_turn_earns_resumable_only_on_a_reported_write(m: lc.Machine = lc.MACHINE) -> None:
    """`turn.resumable.earned`, `turn.write-failed.stays-paused`."""
    paused = PauseState(Phase.PAUSED, EXPIRES)
    ok = m.step(paused, RecordTurn(True))
    assert ok == Accepted(attrs.evolve(paused, phase=Phase.RESUMABLE, turn_recorded=True),
                          Action.TURN_RECORDED, "turn.resumable.earned")
    bad = m.step(paused, RecordTurn(False))
    assert isinstance(bad, Refusal) and bad.code == E.CHECKPOINT_WRITE_FAILED
    assert bad.clause == clause("turn.write-failed.stays-paused")
    unknown = PauseState(Phase.UNKNOWN_OUTCOME, EXPIRES)
    out = m.step(unknown, RecordTurn(True))  # recorded, but still blocked on the outcome
    assert isinstance(out, Accepted) and out.state.phase == Phase.UNKNOWN_OUTCOME
    assert out.state.turn_recorded


def test_expire_only_when_due(m: lc.Machine = lc.MACHINE) -> None:
    """`expiry.transition`: at expires_at a live pause expires; before it, not_due."""
    for s in (PauseState(Phase.PAUSED, EXPIRES), RESUMABLE,
              PauseState(Phase.UNKNOWN_OUTCOME, EXPIRES)):
        early = m.step(s, Expire(now=EXPIRES - 1))
        assert isinstance(early, Refusal) and early.code == E.NOT_DUE
        due = m.step(s, Expire(now=EXPIRES))
        assert isinstance(due, Accepted) and due.state == attrs.evolve(s, phase=Phase.EXPIRED)


def test_unknown_outcome_and_reconcile(m: lc.Machine = lc.MACHINE) -> None:
    """`effect.unknown-outcome`, `effect.reconcile`, `resume.unknown-outcome.blocks`: marked
    unknown from paused or resumable; every resolution goes back to where the turn allows."""
    for s in (PauseState(Phase.PAUSED, EXPIRES), RESUMABLE):
        out = m.step(s, MarkUnknown())
        assert isinstance(out, Accepted) and out.state.phase == Phase.UNKNOWN_OUTCOME
        blocked = m.step(out.state, Resume(now=0, response_digest="a"))
        assert isinstance(blocked, Refusal) and blocked.code == E.OUTCOME_UNKNOWN
        for r in Resolution:
            back = m.step(out.state, Reconcile(r))
            assert isinstance(back, Accepted) and back.state == s
    for s in (PauseState(Phase.PAUSED, EXPIRES), RESUMABLE):
        out = m.step(s, Reconcile(Resolution.APPLIED))
        assert isinstance(out, Refusal) and out.code == E.INVALID_TRANSITION


def test_cancel_from_every_non_terminal_phase(m: lc.Machine = lc.MACHINE) -> None:
    """`cancel.distinct`."""
    for s in reachable(m):
        out = m.step(s, Cancel())
        if s.phase in TERMINAL:
            assert isinstance(out, Refusal)
        else:
            assert out == Accepted(attrs.evolve(s, phase=Phase.CANCELLED), Action.CANCELLED,
                                   "cancel.distinct")


# -- absorbing, refusal changes nothing, invariants ------------------------------------------


def test_terminal_phases_absorb_every_event(m: lc.Machine = lc.MACHINE) -> None:
    """`lifecycle.terminal.absorbing`: from consumed, expired and cancelled no event of the
    alphabet changes the state (a replay is accepted and changes nothing)."""
    terminal = [s for s in reachable(m) if s.phase in TERMINAL]
    assert {s.phase for s in terminal} == TERMINAL
    for s in terminal:
        for e in alphabet():
            out = m.step(s, e)
            if isinstance(out, Accepted):
                assert out.action == Action.REPLAYED and out.state == s, (s, e, out)
            else:
                assert isinstance(out, Refusal), (s, e, out)
            if type(e) in (RecordTurn, Expire, Cancel, MarkUnknown, Reconcile):
                assert isinstance(out, Refusal) and out.code == {
                    Phase.CONSUMED: E.PAUSE_CONSUMED, Phase.EXPIRED: E.PAUSE_EXPIRED,
                    Phase.CANCELLED: E.PAUSE_CANCELLED}[s.phase], (s, e, out)


def test_a_refusal_carries_no_state_and_leaves_the_input_alone(m: lc.Machine = lc.MACHINE) -> None:
    """`lifecycle.refusal.no-change`, `lifecycle.transition.table`: a refusal is a value with a
    clause, a code and a message -- no new state -- and the state given in is untouched."""
    assert "state" not in attrs.fields_dict(Refusal)
    refusals = 0
    for s in reachable(m):
        before = attrs.asdict(s)
        for e in alphabet():
            out = m.step(s, e)
            assert attrs.asdict(s) == before
            if isinstance(out, Refusal):
                refusals += 1
                assert out.clause in CLAUSE_BY_ID and out.code in set(ErrorCode) and out.message
    assert refusals > 100


def test_invariants_are_preserved_by_every_step_from_every_reachable_state(
        m: lc.Machine = lc.MACHINE) -> None:
    """`resume.consume.at-most-once`, `expiry.no-consume-after`, `turn.resumable.earned`:
    PAUSE_INVARIANTS hold in every reachable state and after every accepted step; a consume
    happens only strictly before expires_at."""
    for s in reachable(m):
        assert lc.invariants_hold(s), s
        for e in alphabet():
            out = m.step(s, e)
            if isinstance(out, Accepted):
                assert lc.invariants_hold(out.state), (s, e, out)
                if out.action == Action.CONSUMED:
                    assert isinstance(e, Resume) and e.now < s.expires_at
                    assert s.phase == Phase.RESUMABLE and s.turn_recorded


def test_the_invariants_can_fail() -> None:
    """The invariant predicates reject the states they exist to exclude."""
    assert not lc.inv_resumable_has_turn(PauseState(Phase.RESUMABLE, EXPIRES))
    assert not lc.inv_consumed_before_expiry(
        PauseState(Phase.CONSUMED, EXPIRES, True, "a", consumed_at=EXPIRES))
    assert not lc.inv_consumed_before_expiry(PauseState(Phase.CONSUMED, EXPIRES, True, None, 0))
    assert not lc.inv_consumed_before_expiry(PauseState(Phase.PAUSED, EXPIRES, False, "a"))


# -- the table is faithful: frozen, expiry in rows, targets that updates cannot overrule -------


def test_the_table_is_frozen() -> None:
    """Rows, checks and the machine's maps cannot be changed in place: a variant is a new
    machine built from the table's values."""
    row = lc.MACHINE.index[(Resume, Phase.RESUMABLE)]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        row.target = Phase.EXPIRED  # type: ignore[misc]
    with pytest.raises(TypeError):
        lc.MACHINE.index[(Resume, Phase.RESUMABLE)] = row  # type: ignore[index]
    with pytest.raises(TypeError):
        lc.COMMON_CHECKS[Resume] = ()  # type: ignore[index]
    assert isinstance(lc.TABLE, tuple) and isinstance(lc.RESUME_CHECKS, tuple)


def test_every_row_decides_something_in_some_reachable_state() -> None:
    """No dead row: each (event, phase) row is the one that decides at least one event of the
    alphabet from a reachable state -- the (Resume, expired) row among them -- which a check
    common to every phase that pre-empted a row would break."""
    decided: set[tuple[type[lc.Event], Phase]] = set()
    for s in reachable():
        for e in alphabet():
            out = lc.step(s, e)
            row = lc.row_for(s, e)
            if isinstance(out, Accepted) or out.message == row.message or any(
                    out.message == c.message for c in row.checks):
                decided.add((row.event, row.source))
    assert (Resume, Phase.EXPIRED) in decided
    missing = {(r.event.__name__, r.source.value) for r in lc.TABLE} - {
        (ev.__name__, ph.value) for ev, ph in decided}
    assert not missing, missing


def test_expiry_is_decided_by_the_rows() -> None:
    """`resume.expiry`: no check common to every resume reads the clock; the live rows refuse
    at expires_at, the expired row always, and a decided pause answers for what won."""
    assert all(c.name != "expiry" for c in lc.RESUME_CHECKS)
    for phase in LIVE:
        names = [c.name for c in lc.MACHINE.index[(Resume, phase)].checks]
        assert names[0] == "expiry", (phase, names)
    late = Resume(now=EXPIRES + 5, response_digest="a")
    out = lc.step(attrs.evolve(RESUMABLE, phase=Phase.EXPIRED), late)
    assert isinstance(out, Refusal) and out.code == E.PAUSE_EXPIRED
    assert out.message == lc.MACHINE.index[(Resume, Phase.EXPIRED)].message


def test_a_rows_update_cannot_overrule_its_declared_target() -> None:
    """The phase after an accepted step is the row's declared target: an update that sets
    another phase than the target it is handed is overruled."""
    row = lc.MACHINE.index[(Resume, Phase.RESUMABLE)]
    sneaky = lc.MACHINE.with_row(attrs.evolve(
        row, update=lambda s, e, _target: attrs.evolve(s, phase=Phase.EXPIRED, consumed_at=0,
                                                       response_digest="a")))
    out = sneaky.step(RESUMABLE, Resume(now=0, response_digest="a"))
    assert isinstance(out, Accepted) and out.state.phase == Phase.CONSUMED


def test_changing_the_consume_rows_target_fails_the_lifecycle_tests() -> None:
    """By mutation: the consume row's target changed to ``expired`` -- the tests above,
    run on that machine, fail (and the diagram's edges change with it)."""
    row = lc.MACHINE.index[(Resume, Phase.RESUMABLE)]
    mutant = lc.MACHINE.with_row(attrs.evolve(row, target=Phase.EXPIRED))
    with pytest.raises(AssertionError, match="Accepted"):
        test_consume_records_the_response_and_time(mutant)
    with pytest.raises(AssertionError):
        test_invariants_are_preserved_by_every_step_from_every_reachable_state(mutant)
    assert (Phase.RESUMABLE, "Resume", Phase.CONSUMED) in lc.transitions()
